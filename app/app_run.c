/* app_run.c - `horizon run`: a headless batch run that streams stats.csv, writes PNG frames on
 * worker threads, optional .npy field dumps, and run.json at the end; checkpoints it on request
 * and on SIGINT/SIGTERM, and resumes it from a checkpoint. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "app_batch.h"
#include "app_ckpt.h"
#include "app_dumps.h"
#include "app_rows.h"
#include "app_frames.h"
#include "app_output.h"
#include "app_progress.h"
#include "app_resume.h"
#include "app_signal.h"
#include "sim_checkpoint.h"
#include "sim_events.h"
#include "sim_outdir.h"

static const char run_usage[] =
    "usage: horizon run [SCENARIO.ini | MODEL] [options]\n"
    "\n"
    "Runs a scenario headless and writes stats.csv, frames/frame_NNNNNN.png and run.json into\n"
    "the output directory. SCENARIO.ini is a file; MODEL the name of one in the library (see\n"
    "horizon models). Without either, the built-in default scenario runs.\n"
    "\n"
    "options:\n"
    "  --set SECTION.KEY=VALUE  override any scenario key (repeatable), e.g. world.width=256\n"
    "  --steps N                steps to run (run.steps)\n"
    "  --seed N                 random seed (run.seed)\n"
    "  --backend auto|cpu|cuda  simulation engine (default auto: CUDA when a GPU is usable)\n"
    "  --threads N              CPU threads (default: all cores; on a machine busy with\n"
    "                           other work, no more than the cores it left)\n"
    "  --out DIR                output directory (output.dir, default horizon-out)\n"
    "  --force                  replace the results of an earlier run in DIR\n"
    "  --frames-every K         write a frame every K steps, 0 = no frames (output.frames_every)\n"
    "  --frame-size WxH         frame size in pixels (default: from the world size)\n"
    "  --colormap NAME          viridis|magma|inferno|gray (output.colormap)\n"
    "  --stats-every K          a stats.csv row every K steps, 0 = none (output.stats_every)\n"
    "  --dump-fields-every K    write fields/field_STEP.npy (float32) every K steps\n"
    "  --events FILE            parameter changes and paints to apply during the run, each\n"
    "                           after its step (a step,event,value CSV file, as the viewer\n"
    "                           records them); copied to DIR/events.csv\n"
    "  --checkpoint-every K     write DIR/checkpoint.hzc every K steps (the previous one is kept\n"
    "                           as checkpoint.hzc.prev); SIGINT/SIGTERM always write one\n"
    "  --resume FILE            continue the run saved in checkpoint FILE, in FILE's directory\n"
    "                           (with the events of its events.csv, if it has one); only\n"
    "                           --steps (the total), --backend, --threads, --checkpoint-every,\n"
    "                           --progress and --quiet may be given with it\n"
    "  --progress               frequent progress lines when stderr is not a terminal\n"
    "  --quiet                  no progress and no summary\n"
    "  -h, --help               this help\n";

typedef struct run_opts {
    const char *scenario;
    char **sets;
    int n_sets;
    const char *backend;
    int threads;
    int force, quiet, progress;
    int64_t checkpoint_every; /* -1: not given */
    const char *resume;       /* checkpoint path, or NULL */
    const char *events;       /* --events FILE, or NULL */
} run_opts;

/* Command-line shortcuts are scenario keys under another name. */
static const app_shortcut shortcuts[] = {
    {"--steps", "run.steps"},
    {"--seed", "run.seed"},
    {"--out", "output.dir"},
    {"--frames-every", "output.frames_every"},
    {"--colormap", "output.colormap"},
    {"--stats-every", "output.stats_every"},
    {"--dump-fields-every", "output.dump_fields_every"},
};

/* v when it is a plain word (letters, digits, '_'), else "other": it goes into JSON as is. */
static const char *plain_word(const char *v)
{
    if (!v || !*v)
        return "other";
    for (const char *c = v; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_')
            return "other";
    return v;
}

/* `sc`: the scenario in force at the end (the events' changes made); `from`: the step this
 * process started at (a resumed run's checkpoint step, else 0), the rate counts the steps this
 * process ran; `ev`: the run's events, or NULL. */
static int write_run_json(const char *dir, const sim_scenario *sc, const char *backend,
                          int threads, int64_t steps, int64_t from, double setup, double wall,
                          uint64_t checksum, const sim_events *ev, sim_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return sim_err_set(err, SIM_ENOMEM, "out of memory for run.json");
    /* The threads' wait at barriers (app/main.c chooses it unless the user did): the policy's
     * word, "spin N" for a spin count, or "default". */
    const char *wait_key, *wait = app_omp_wait(&wait_key);
    const int spin = wait && strcmp(wait_key, "GOMP_SPINCOUNT") == 0;
    fprintf(m, "{\n  \"version\": \"%s\",\n  \"backend\": \"%s\",\n  \"threads\": %d,\n"
            "  \"omp_wait\": \"%s%s\",\n", HORIZON_VERSION, backend, threads,
            spin ? "spin " : "", wait ? plain_word(wait) : "default");
    fprintf(m, "  \"seed\": %" PRIu64 ",\n  \"steps\": %" PRId64 ",\n  \"setup_seconds\": %.3f,\n"
            "  \"wall_seconds\": %.3f,\n"
            "  \"steps_per_second\": %.3f,\n  \"final_checksum\": \"%016" PRIx64 "\",\n",
            sc->seed, steps, setup, wall,
            wall > 0 ? (double)(steps - from) / wall : 0.0, checksum);
    if (from > 0)
        fprintf(m, "  \"resumed_from_step\": %" PRId64 ",\n", from);
    if (ev)
        fprintf(m, "  \"events\": \"events.csv\",\n  \"events_count\": %zu,\n"
                "  \"events_applied\": %zu,\n", ev->n, ev->n - sim_events_count_from(ev, steps));
    fputs("  \"scenario\": ", m);
    sim_scenario_write_json(sc, m, 2);
    fputs("\n}\n", m);
    fclose(m);
    char path[SIM_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/run.json", dir);
    int rc = app_write_atomic(path, text, len, err);
    free(text);
    return rc;
}

static int parse_args(int argc, char **argv, run_opts *o, sim_scenario *sc, sim_checkpoint *ck)
{
    memset(o, 0, sizeof *o);
    o->backend = "auto";
    o->checkpoint_every = -1;
    char **sets = calloc((size_t)argc * 2 + 2, sizeof *sets);
    char **owned = calloc((size_t)argc * 2 + 2, sizeof *owned);
    int n_owned = 0, bad = 0, rc = SIM_EINVAL;
    if (!sets || !owned) {
        fprintf(stderr, "horizon: out of memory\n");
        free(sets);
        free(owned);
        return SIM_ENOMEM;
    }
    o->sets = sets;
    for (int i = 1; i < argc && !bad; i++) {
        const char *v = NULL, *a = argv[i];
        char *assign = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(run_usage, stdout);
            rc = -1;
            goto done;
        } else if (app_opt(argc, argv, &i, "--set", &v, &bad)) {
            if (!bad)
                sets[o->n_sets++] = (char *)v;
        } else if (app_opt(argc, argv, &i, "--backend", &v, &bad)) {
            o->backend = v;
        } else if (app_opt(argc, argv, &i, "--threads", &v, &bad)) {
            int64_t t = 0;
            if (!bad && !app_parse_i64("--threads", v, 0, 4096, &t))
                bad = 1;
            o->threads = (int)t;
        } else if (app_opt(argc, argv, &i, "--frame-size", &v, &bad)) {
            int w, h;
            char tail;
            if (!bad && (sscanf(v, "%dx%d%c", &w, &h, &tail) != 2 || w < 1 || h < 1 ||
                         w > 16384 || h > 16384)) {
                fprintf(stderr, "horizon: --frame-size: '%s' is not WxH with sides in 1 .. "
                        "16384\n", v);
                bad = 1;
            } else if (!bad) {
                char *a1 = malloc(64), *a2 = malloc(64);
                if (!a1 || !a2) {
                    free(a1);
                    free(a2);
                    bad = 1;
                    break;
                }
                snprintf(a1, 64, "output.frame_width=%d", w);
                snprintf(a2, 64, "output.frame_height=%d", h);
                owned[n_owned++] = sets[o->n_sets++] = a1;
                owned[n_owned++] = sets[o->n_sets++] = a2;
            }
        } else if (app_opt(argc, argv, &i, "--checkpoint-every", &v, &bad)) {
            if (!bad && !app_parse_i64("--checkpoint-every", v, 0, INT64_MAX,
                                       &o->checkpoint_every))
                bad = 1;
        } else if (app_opt(argc, argv, &i, "--resume", &v, &bad)) {
            o->resume = v;
        } else if (app_opt(argc, argv, &i, "--events", &v, &bad)) {
            o->events = v;
        } else if (strcmp(a, "--force") == 0) {
            o->force = 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            o->quiet = 1;
        } else if (strcmp(a, "--progress") == 0) {
            o->progress = 1;
        } else if (app_opt_shortcut(argc, argv, &i, shortcuts,
                                     sizeof shortcuts / sizeof shortcuts[0], &assign, &bad)) {
            if (assign)
                owned[n_owned++] = sets[o->n_sets++] = assign;
        } else if (a[0] == '-') {
            fprintf(stderr, "horizon run: unknown option '%s' (see horizon run --help)\n", a);
            bad = 1;
        } else if (!o->scenario) {
            o->scenario = a;
        } else {
            fprintf(stderr, "horizon run: more than one scenario given ('%s' and '%s')\n",
                    o->scenario, a);
            bad = 1;
        }
    }
    if (!bad && o->resume && o->events) {
        /* the run's own copy, DIR/events.csv, is what a resumed run applies: another file
         * would make the run's directory describe a run that never happened */
        fprintf(stderr, "horizon run: --resume applies the run's own events (events.csv next to "
                "the checkpoint); '--events %s' cannot be given with it (only --steps (the "
                "total), --backend, --threads, --checkpoint-every, --progress and --quiet may "
                "change)\n", o->events);
        bad = 1;
    }
    if (!bad)
        rc = o->resume ? app_resume_load(o->resume, o->scenario, o->force, o->sets, o->n_sets,
                                         sc, ck)
                       : app_load_scenario(o->scenario, o->sets, o->n_sets, sc);
done:
    for (int i = 0; i < n_owned; i++)
        free(owned[i]);
    free(owned);
    free(sets);
    o->sets = NULL;
    return rc;
}

static int due(int64_t step, int64_t every)
{
    return every > 0 && step % every == 0;
}

/* ---- the run ---- */

/* The longest a batch of steps (sim_step_batch) should take: the main loop sees a signal and
 * updates the progress line between batches. */
#define RUN_BATCH_SECONDS 0.05

/* What a run holds, so that one cleanup path releases it. */
typedef struct run_ctx {
    sim_scenario sc;
    sim *s;
    FILE *stats;
    app_rows *rows;    /* stats.csv rows, formatted and written on their own thread */
    app_frames fr;
    app_dumps *dumps;  /* field dumps, written on their own thread */
    sim_checkpoint ck; /* buffers sized once: a signal may ask for a checkpoint at any step */
    app_ckpt *ckw;     /* writes ck on its own thread */
    int64_t ckpt_every;
    int64_t last_ckpt; /* step of the newest checkpoint on disk, -1: none */
    int64_t ck_queued; /* step of the newest checkpoint handed to the writer, -1: none */
    int lock_fd;       /* the output directory's lock, -1 until taken */
    int created;       /* this run made the output directory */
    int stepped;       /* a step ran: results exist that a failure must not remove */
    int has_events;    /* --events, or a resumed run's events.csv */
    sim_events ev;     /* the run's events, in file order */
    size_t ev_next;    /* the first of them not applied yet */
    double setup_s;    /* building the state: sim_create, or a checkpoint restored */
    const sim_backend_ops *ops; /* the backend, for unpinning ck's buffers */
    int ck_pinned[2];  /* ck.field, ck.agents pinned (sim_pin_host) */
    char stats_path[SIM_PATH_MAX + 16];
    char ckpt_path[SIM_PATH_MAX + 32];
} run_ctx;

static void run_release(run_ctx *r)
{
    app_rows_destroy(r->rows); /* it writes into r->stats until it is done */
    r->rows = NULL;
    if (r->stats)
        fclose(r->stats);
    r->stats = NULL;
    app_frames_release(&r->fr);
    memset(&r->fr, 0, sizeof r->fr);
    app_dumps_destroy(r->dumps);
    r->dumps = NULL;
    app_ckpt_destroy(r->ckw); /* the writer reads ck until it is done */
    r->ckw = NULL;
    if (r->ck_pinned[0])
        sim_unpin_host(r->ops, r->ck.field);
    if (r->ck_pinned[1])
        sim_unpin_host(r->ops, r->ck.agents);
    r->ck_pinned[0] = r->ck_pinned[1] = 0;
    sim_checkpoint_release(&r->ck);
    sim_destroy(r->s);
    r->s = NULL;
    sim_outdir_unlock(r->lock_fd);
    r->lock_fd = -1;
    sim_events_release(&r->ev);
}

/* A resumed run's events: DIR/events.csv when the run had --events (a run writes that name only
 * then, and --force removes it), from the first one at the checkpoint's step. No file: none. */
static int resume_events(run_ctx *r, int64_t step, sim_err *err)
{
    char path[SIM_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/events.csv", r->sc.dir);
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return SIM_OK;
    int rc = sim_events_load(path, &r->ev, err);
    if (rc == SIM_OK)
        rc = sim_events_check(&r->ev, &r->sc, err);
    if (rc != SIM_OK)
        return rc;
    r->has_events = 1;
    r->ev_next = sim_events_first_at(&r->ev, step);
    return SIM_OK;
}

/* Steps for the next batch from `done` steps completed: at most cap, and ending at the first
 * step after which the host needs the state: the end of the run, a frame, a field dump, a
 * checkpoint, or an event (the events of step e apply after step e, before step e + 1). Stats
 * rows need nothing: they come back with the batch. */
static int batch_length(const run_ctx *r, int64_t done, int cap)
{
    const sim_scenario *sc = &r->sc;
    int64_t end = done + cap;
    int64_t bounds[5] = {sc->steps, app_batch_next_due(done, sc->frames_every),
                         app_batch_next_due(done, sc->dump_fields_every),
                         app_batch_next_due(done, r->ckpt_every), INT64_MAX};
    if (r->has_events && r->ev_next < r->ev.n)
        bounds[4] = r->ev.ev[r->ev_next].step;
    for (int i = 0; i < 5; i++)
        if (bounds[i] > done && bounds[i] < end)
            end = bounds[i];
    return (int)(end - done);
}

/* Waits until the checkpoint in flight is on disk (last_ckpt then says so); its failure. */
static int checkpoint_settle(run_ctx *r, sim_err *err)
{
    return r->ckw ? app_ckpt_wait(r->ckw, &r->last_ckpt, err) : SIM_OK;
}

/* Captures the current step's state and hands it to the writer, which writes
 * DIR/checkpoint.hzc while the next steps run (app_ckpt.h). The queued frames are written and
 * stats.csv synced first, so every row and frame up to a checkpoint's step is on disk before it:
 * a resume never has gaps. */
static int checkpoint(run_ctx *r, sim_err *err)
{
    int rc;
    if (r->fr.queue && (rc = render_queue_finish(r->fr.queue, err)) != SIM_OK)
        return rc;
    /* The dumps before it are on disk before the checkpoint is: a resume rewrites only later
     * ones. */
    if (r->dumps && (rc = app_dumps_drain(r->dumps, err)) != SIM_OK)
        return rc;
    if (r->rows && (rc = app_rows_drain(r->rows, err)) != SIM_OK)
        return rc;
    if (r->stats && fsync(fileno(r->stats)) != 0)
        return sim_err_set(err, SIM_EIO, "%s: fsync failed: %s", r->stats_path, strerror(errno));
    if ((rc = checkpoint_settle(r, err)) != SIM_OK) /* ck is free again */
        return rc;
    int ticket;
    if ((rc = sim_checkpoint_capture_begin(&r->ck, r->s, r->ckpt_every, &ticket, err)) != SIM_OK)
        return rc;
    app_ckpt_submit(r->ckw, &r->ck, r->ckpt_path, sim_steps_done(r->s), r->s, ticket);
    r->ck_queued = sim_steps_done(r->s);
    return SIM_OK;
}

/* Sets up the simulation (fresh, or from the checkpoint already in r->ck) and then its outputs:
 * the state and every buffer are allocated before the output directory is made or changed, so
 * that a run without the memory leaves nothing behind. The directory is already locked when it
 * existed (app_run_main); a new one is made and locked here. */
static int run_open(run_ctx *r, const run_opts *o, const sim_backend_ops *ops, int threads,
                    sim_err *err)
{
    const sim_scenario *sc = &r->sc;
    const char *dir = sc->dir;
    int rc;
    double t0 = app_now();
    if (o->resume) {
        rc = sim_checkpoint_restore(&r->ck, ops, threads, &r->s, err);
    } else {
        rc = sim_create(sc, ops, threads, &r->s, err);
        if (rc == SIM_OK)
            rc = sim_checkpoint_init(&r->ck, sc, err);
    }
    if (rc == SIM_OK) {
        /* A capture copies the whole state into ck: pinned, that is a DMA at the link's speed
         * on the GPU (the field's buffer is never reallocated; the agents' only for a model
         * whose population moves, version 2). */
        r->ops = ops;
        const size_t cells = (size_t)r->ck.sc.width * (size_t)r->ck.sc.height;
        r->ck_pinned[0] = sim_pin_host(ops, r->ck.field,
                                       cells * (size_t)r->ck.n_fields * sizeof *r->ck.field);
        if (r->ck.version == 1 && r->ck.n_agents > 0)
            r->ck_pinned[1] = sim_pin_host(ops, r->ck.agents,
                                           (size_t)r->ck.n_agents * sizeof *r->ck.agents);
    }
    r->setup_s = app_now() - t0;
    if (rc == SIM_OK && sc->frames_every > 0) {
        /* Encoding a large frame takes longer than the GPU needs for the steps between frames:
         * with the simulation on the GPU the cores are free, so up to 8 encoders (half the
         * cores) keep the queue from stalling the steps; on the CPU backend the cores step,
         * and 2 encoders overlap with them. */
        int workers = 2;
        if (strcmp(ops->name, "cpu") != 0) {
            workers = omp_get_num_procs() / 2;
            workers = workers < 2 ? 2 : workers > 8 ? 8 : workers;
        }
        rc = app_frames_init(&r->fr, sc, workers, err);
        if (rc == SIM_OK)
            app_frames_pin(&r->fr, ops);
        /* Frame i shows step i*frames_every; frames up to the checkpoint are on disk. */
        r->fr.next_index = o->resume ? r->ck.step / sc->frames_every + 1 : 0;
    }
    if (rc == SIM_OK && sc->dump_fields_every > 0)
        rc = app_dumps_create(sc->width, sc->height, ops, &r->dumps, err);
    if (rc == SIM_OK)
        rc = app_ckpt_create(&r->ckw, err);
    if (rc != SIM_OK)
        return rc;

    rc = o->resume ? app_output_resume(dir, r->ck.step, sc, err)
                   : app_output_prepare(dir, o->force, sc->frames_every > 0,
                                        sc->dump_fields_every > 0, &r->lock_fd, &r->created,
                                        err);
    if (rc == SIM_OK && !o->resume && r->has_events) {
        /* the run's directory describes the run: a resume applies this copy */
        char path[SIM_PATH_MAX + 16];
        snprintf(path, sizeof path, "%s/events.csv", dir);
        rc = app_write_atomic(path, r->ev.text, r->ev.len, err);
    }
    if (rc == SIM_OK && sc->stats_every > 0)
        rc = o->resume ? app_stats_reopen(dir, &r->stats, err)
                       : app_stats_open(dir, sc, &r->stats, err);
    if (rc == SIM_OK && r->stats)
        rc = app_rows_create(r->stats, r->stats_path, &r->rows, err);
    return rc;
}

/* The last rows written, the stats writer stopped and stats.csv closed: its failure. */
static int stats_close(run_ctx *r, sim_err *err)
{
    int rc = r->rows ? app_rows_drain(r->rows, err) : SIM_OK;
    app_rows_destroy(r->rows);
    r->rows = NULL;
    if (r->stats && fclose(r->stats) != 0 && rc == SIM_OK)
        rc = sim_err_set(err, SIM_EIO, "%s: write failed: %s", r->stats_path, strerror(errno));
    r->stats = NULL;
    return rc;
}

int app_run_main(int argc, char **argv)
{
    run_opts o;
    run_ctx r;
    memset(&r, 0, sizeof r);
    r.lock_fd = -1;
    int rc = parse_args(argc, argv, &o, &r.sc, &r.ck);
    if (rc == -1)
        return APP_EXIT_OK;
    if (rc != SIM_OK)
        return app_exit_code(rc == SIM_EIO ? SIM_EINVAL : rc);
    const sim_scenario *sc = &r.sc;
    const char *dir = sc->dir;
    const int64_t start = o.resume ? r.ck.step : 0;
    sim_err err = {{0}};
    if (o.events) {
        /* checked whole before anything is made: a bad line is exit 2 with nothing written */
        rc = sim_events_load(o.events, &r.ev, &err);
        if (rc == SIM_OK)
            rc = sim_events_check(&r.ev, sc, &err);
        if (rc != SIM_OK) {
            fprintf(stderr, "horizon: %s\n", err.msg);
            sim_events_release(&r.ev);
            return app_exit_code(rc == SIM_EIO ? SIM_EINVAL : rc);
        }
        r.has_events = 1;
    }
    r.ckpt_every = o.checkpoint_every >= 0 ? o.checkpoint_every
                                           : (o.resume ? r.ck.checkpoint_every : 0);
    r.last_ckpt = r.ck_queued = o.resume ? start : -1;
    snprintf(r.stats_path, sizeof r.stats_path, "%s/stats.csv", dir);
    snprintf(r.ckpt_path, sizeof r.ckpt_path, "%s/checkpoint.hzc", dir);

    const sim_backend_ops *ops;
    rc = app_pick_backend(o.backend, &ops, o.quiet);
    if (rc != SIM_OK) {
        sim_checkpoint_release(&r.ck);
        sim_events_release(&r.ev);
        return app_exit_code(rc);
    }
    int threads = app_threads(o.threads);
    /* Frames on the CPU backend: one core is left to the frame encoders (~25 ms of a core a
     * 1024^2 frame). Sharing a core with one of the step's threads, they held up every thread at
     * each barrier: on 16 cores the default scenario with a frame every 100 steps ran at
     * 2,097-2,262 steps/s on 16 threads against 3,306-3,412 on 15 (none: 4,850-5,340). */
    if (o.threads <= 0 && sc->frames_every > 0 && strcmp(ops->name, "cpu") == 0 &&
        threads >= APP_FRAME_CORE_MIN)
        threads--;
    /* The directory is ours before anything in it is read or changed: a second process on it
     * is refused here, at once. */
    rc = o.resume ? sim_outdir_lock(dir, &r.lock_fd, &err)
                  : app_output_claim(dir, o.force, &r.lock_fd, &err);
    if (rc != SIM_OK) {
        fprintf(stderr, "horizon: %s\n", err.msg);
        sim_checkpoint_release(&r.ck);
        sim_events_release(&r.ev);
        return app_exit_code(rc);
    }
    if (o.resume && (rc = resume_events(&r, start, &err)) != SIM_OK) {
        fprintf(stderr, "horizon: %s\n", err.msg);
        run_release(&r);
        return app_exit_code(rc == SIM_EIO ? SIM_EINVAL : rc);
    }
    app_signals old_signals;
    app_signals_install(&old_signals);
    app_progress prog;
    memset(&prog, 0, sizeof prog);

    if ((rc = run_open(&r, &o, ops, threads, &err)) != SIM_OK)
        goto fail;
    if (!o.quiet) {
        if (o.resume)
            fprintf(stderr, "horizon: resuming %s at step %lld (written by the %s backend)\n",
                    o.resume, (long long)start, r.ck.backend);
        fprintf(stderr, "horizon: %dx%d world, %lld agents, r=%d, %lld steps on %s%s\n",
                sc->width, sc->height, (long long)sim_agent_count(r.s), sc->radius,
                (long long)sc->steps, ops->name,
                strcmp(ops->name, "cpu") == 0 ? (threads == 1 ? " (1 thread)" : "") : "");
        if (strcmp(ops->name, "cpu") == 0 && o.threads > threads)
            fprintf(stderr, "horizon: other work held %s of the %d cores at the start: %d "
                    "thread%s instead of %d (the results are the same for any count)\n",
                    getenv("HORIZON_BUSY_CORES"), omp_get_num_procs(), threads,
                    threads == 1 ? "" : "s", o.threads);
        size_t late = r.has_events ? sim_events_count_from(&r.ev, sc->steps) : 0;
        if (late > 0)
            fprintf(stderr, "horizon: %zu of the %zu events of %s are at steps >= %lld, after the "
                    "last step: not applied\n", late, r.ev.n, r.ev.name, (long long)sc->steps);
    }

    /* Step 0 (the initial state) gets a frame and a dump too; a resumed run has them. */
    if (!o.resume && sc->frames_every > 0 && (rc = app_frames_emit(&r.fr, r.s, dir, &err)) != SIM_OK)
        goto fail;
    if (!o.resume && sc->dump_fields_every > 0 &&
        (rc = app_dumps_submit(r.dumps, r.s, dir, &err)) != SIM_OK)
        goto fail;

    app_progress_start(&prog, o.quiet ? -1 : o.progress, start, sc->steps);
    double t0 = app_now();
    uint64_t checksum = 0;
    int64_t checksum_step = -1; /* the step whose checksum `checksum` holds */
    int64_t done = start;       /* steps completed */
    app_batch bt;
    app_batch_init(&bt, RUN_BATCH_SECONDS);
    uint8_t want[SIM_STEP_BATCH_MAX];
    sim_stats out[SIM_STEP_BATCH_MAX];
    while (done < sc->steps && !app_signal_pending()) {
        /* The events of step `done` change the run from the next step on. The stats row,
         * frame, dump and checkpoint of step `done` came before them: a checkpoint holds the
         * scenario its step ran with, and a resume from it applies the events of its step
         * first. */
        if (r.has_events && (rc = sim_events_apply(&r.ev, &r.ev_next, r.s, &err)) != SIM_OK)
            goto fail;
        int n = batch_length(&r, done, bt.cap);
        for (int i = 0; i < n; i++)
            want[i] = (uint8_t)due(done + 1 + i, sc->stats_every);
        double tb = app_now();
        rc = sim_step_batch(r.s, n, want, out);
        if (rc != SIM_OK) {
            if (n == 1)
                sim_err_set(&err, rc, "step %lld: %s", (long long)done + 1, sim_errmsg(r.s));
            else
                sim_err_set(&err, rc, "steps %lld .. %lld: %s", (long long)done + 1,
                            (long long)done + n, sim_errmsg(r.s));
            goto fail;
        }
        app_batch_took(&bt, n, app_now() - tb);
        /* Only the batch's last step can have a frame, a dump or a checkpoint (batch_length
         * ends it there): the steps before it are complete once their rows are written. */
        if (n > 1)
            r.stepped = 1;
        for (int i = 0; i < n; i++) {
            if (want[i]) {
                checksum = out[i].checksum;
                checksum_step = out[i].step;
            }
        }
        if (r.rows && (rc = app_rows_submit(r.rows, out, n, want, &err)) != SIM_OK)
            goto fail;
        done += n;
        if (due(done, sc->frames_every) &&
            (rc = app_frames_emit(&r.fr, r.s, dir, &err)) != SIM_OK)
            goto fail;
        if (due(done, sc->dump_fields_every) &&
            (rc = app_dumps_submit(r.dumps, r.s, dir, &err)) != SIM_OK)
            goto fail;
        if (due(done, r.ckpt_every) && (rc = checkpoint(&r, &err)) != SIM_OK)
            goto fail;
        if ((rc = app_ckpt_poll(r.ckw, &r.last_ckpt, &err)) != SIM_OK)
            goto fail; /* a checkpoint that could not be written stops the run now */
        r.stepped = 1;
        app_progress_update(&prog, done);
    }
    if (app_signal_pending()) {
        /* Interrupted (the batch in flight completed): save the step just finished and say how
         * to go on. */
        int sig = app_signal_pending();
        app_progress_end(&prog, done);
        if (r.ck_queued != done && (rc = checkpoint(&r, &err)) != SIM_OK)
            goto fail;
        if ((rc = checkpoint_settle(&r, &err)) != SIM_OK)
            goto fail;
        if ((rc = stats_close(&r, &err)) != SIM_OK)
            goto fail;
        fprintf(stderr, "horizon: %s after step %lld of %lld; checkpoint: %s\n"
                "resume with: horizon run --resume %s\n",
                sig == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)",
                (long long)done, (long long)sc->steps, r.ckpt_path, r.ckpt_path);
        run_release(&r);
        app_signals_restore(&old_signals);
        return sig == SIGINT ? APP_EXIT_SIGINT : APP_EXIT_SIGTERM;
    }
    if (r.fr.queue && (rc = render_queue_finish(r.fr.queue, &err)) != SIM_OK)
        goto fail;
    if (r.dumps && (rc = app_dumps_drain(r.dumps, &err)) != SIM_OK)
        goto fail;
    /* With checkpoints on, the end state is saved too, so that the run can be extended later
     * (--resume with a larger --steps). */
    if (r.ckpt_every > 0 && r.ck_queued != sc->steps && (rc = checkpoint(&r, &err)) != SIM_OK)
        goto fail;
    if ((rc = checkpoint_settle(&r, &err)) != SIM_OK)
        goto fail;
    double wall = app_now() - t0;
    app_progress_end(&prog, sc->steps);
    /* The state's checksum, whether or not this process ran a step (a resume of a finished
     * run, --steps 0). */
    if (checksum_step != sc->steps && (rc = sim_checksum(r.s, &checksum)) != SIM_OK) {
        sim_err_set(&err, rc, "%s", sim_errmsg(r.s));
        goto fail;
    }
    if ((rc = stats_close(&r, &err)) != SIM_OK)
        goto fail;
    rc = write_run_json(dir, sim_get_scenario(r.s), ops->name, threads, sc->steps, start,
                        r.setup_s, wall, checksum, r.has_events ? &r.ev : NULL, &err);
    if (rc != SIM_OK)
        goto fail;
    if (!o.quiet) {
        int64_t ran = sc->steps - start;
        printf("done: %lld steps in %.2f s (%.1f steps/s), final checksum %016" PRIx64 "\n",
               (long long)ran, wall, wall > 0 ? (double)ran / wall : 0.0, checksum);
        printf("output: %s/ (stats.csv, run.json%s%s%s%s)\n", dir,
               r.has_events ? ", events.csv" : "", sc->frames_every > 0 ? ", frames/" : "",
               sc->dump_fields_every > 0 ? ", fields/" : "",
               r.last_ckpt >= 0 ? ", checkpoint.hzc" : "");
        if (sc->frames_every > 0)
            printf("video:  ffmpeg -framerate 30 -i %s/frames/frame_%%06d.png -c:v libx264 "
                   "-pix_fmt yuv420p %s/run.mp4\n", dir, dir);
    }
    run_release(&r);
    app_signals_restore(&old_signals);
    return APP_EXIT_OK;

fail:
    fprintf(stderr, "horizon: %s\n", err.msg);
    if (r.fr.queue)
        render_queue_finish(r.fr.queue, &err);
    if (r.dumps)
        app_dumps_drain(r.dumps, &err); /* nothing is written into DIR after this */
    if (r.rows) {
        sim_err late; /* the failure above is the one to report */
        app_rows_drain(r.rows, &late);
    }
    if (r.ckw) {
        sim_err late; /* the failure above is the one to report */
        checkpoint_settle(&r, &late);
    }
    if (r.created && !r.stepped) {
        /* Failed before the first step (e.g. no device memory for the first frame): nothing
         * worth keeping, so the directory this run made goes again. */
        sim_err late;
        stats_close(&r, &late);
        app_output_abandon(dir, r.lock_fd);
        r.lock_fd = -1;
    }
    if (r.last_ckpt >= 0)
        fprintf(stderr, "horizon: the last good checkpoint is %s (step %lld); continue with: "
                "horizon run --resume %s\n", r.ckpt_path, (long long)r.last_ckpt, r.ckpt_path);
    run_release(&r);
    app_signals_restore(&old_signals);
    return app_exit_code(rc);
}
