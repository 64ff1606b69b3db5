/* app_run.c - `horizon run`: a headless batch run that streams stats.csv, writes PNG frames on
 * worker threads, optional .npy field dumps, and run.json at the end. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_output.h"
#include "app_progress.h"
#include "render_frame.h"
#include "render_queue.h"

static const char run_usage[] =
    "usage: horizon run [SCENARIO.ini] [options]\n"
    "\n"
    "Runs a scenario headless and writes stats.csv, frames/frame_NNNNNN.png and run.json into\n"
    "the output directory. Without SCENARIO, the built-in default scenario runs.\n"
    "\n"
    "options:\n"
    "  --set SECTION.KEY=VALUE  override any scenario key (repeatable), e.g. world.width=256\n"
    "  --steps N                steps to run (run.steps)\n"
    "  --seed N                 random seed (run.seed)\n"
    "  --backend auto|cpu|cuda  simulation engine (default auto: CUDA when a GPU is usable)\n"
    "  --threads N              CPU threads (default: all cores)\n"
    "  --out DIR                output directory (output.dir, default horizon-out)\n"
    "  --force                  replace the results of an earlier run in DIR\n"
    "  --frames-every K         write a frame every K steps, 0 = no frames (output.frames_every)\n"
    "  --frame-size WxH         frame size in pixels (default: from the world size)\n"
    "  --colormap NAME          viridis|magma|inferno|gray (output.colormap)\n"
    "  --stats-every K          a stats.csv row every K steps, 0 = none (output.stats_every)\n"
    "  --dump-fields-every K    write fields/field_STEP.npy (float32) every K steps\n"
    "  --progress               progress lines even when stderr is not a terminal\n"
    "  --quiet                  no progress and no summary\n"
    "  -h, --help               this help\n";

typedef struct run_opts {
    const char *scenario;
    char **sets;
    int n_sets;
    const char *backend;
    int threads;
    int force, quiet, progress;
} run_opts;

/* Command-line shortcuts are scenario keys under another name. */
static const struct {
    const char *opt, *key;
} shortcuts[] = {
    {"--steps", "run.steps"},
    {"--seed", "run.seed"},
    {"--out", "output.dir"},
    {"--frames-every", "output.frames_every"},
    {"--colormap", "output.colormap"},
    {"--stats-every", "output.stats_every"},
    {"--dump-fields-every", "output.dump_fields_every"},
};

/* The frame writer: host buffers sized once, a queue of encoder threads. */
typedef struct frames {
    render_queue *queue;
    sim_view view;
    float *field;
    uint32_t *agents;
    uint8_t *occ;
    int64_t next_index;
} frames;

static void frames_release(frames *fr)
{
    render_queue_destroy(fr->queue);
    free(fr->field);
    free(fr->agents);
    free(fr->occ);
}

static int frames_init(frames *fr, const sim_scenario *sc, int64_t n_agents, sim_err *err)
{
    memset(fr, 0, sizeof *fr);
    int w, h;
    render_frame_size(sc, &w, &h);
    render_view_init(&fr->view, sc->colormap, sc->range_max);
    render_view_fit(&fr->view, sc->width, sc->height, w, h);
    int64_t cells = (int64_t)sc->width * sc->height;
    fr->field = malloc((size_t)cells * sizeof *fr->field);
    fr->agents = malloc((size_t)(n_agents > 0 ? n_agents : 1) * sizeof *fr->agents);
    fr->occ = malloc((size_t)cells);
    if (!fr->field || !fr->agents || !fr->occ)
        return sim_err_set(err, SIM_ENOMEM, "out of memory for frame buffers");
    return render_queue_create(2, 4, w, h, &fr->queue, err);
}

/* Composes the current state into a queue buffer and hands it to the encoders. */
static int frames_emit(frames *fr, sim *s, const char *dir, sim_err *err)
{
    const sim_scenario *sc = sim_get_scenario(s);
    int rc = render_queue_check(fr->queue, err);
    if (rc != SIM_OK)
        return rc;
    uint8_t *rgba = render_queue_acquire(fr->queue);
    const sim_backend_ops *ops = sim_get_backend(s);
    if (ops->compose) {
        rc = ops->compose(sim_get_backend_state(s), &fr->view, rgba, err);
    } else {
        int64_t cells = (int64_t)sc->width * sc->height;
        rc = sim_read_field(s, fr->field);
        if (rc == SIM_OK)
            rc = sim_read_agents(s, fr->agents);
        if (rc != SIM_OK) {
            snprintf(err->msg, sizeof err->msg, "%s", sim_errmsg(s));
        } else {
            render_frame_occupancy(fr->agents, sim_agent_count(s), fr->occ, cells);
            render_frame_compose(&fr->view, fr->field, sc->width, sc->height, fr->occ,
                                 render_field_max(fr->field, cells), rgba);
        }
    }
    char path[SIM_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/frames/frame_%06" PRId64 ".png", dir, fr->next_index);
    if (rc != SIM_OK) {
        render_queue_submit(fr->queue, rgba, NULL);
        return rc;
    }
    render_queue_submit(fr->queue, rgba, path);
    fr->next_index++;
    return SIM_OK;
}

static int dump_field(sim *s, float *buf, const char *dir, sim_err *err)
{
    const sim_scenario *sc = sim_get_scenario(s);
    if (sim_read_field(s, buf) != SIM_OK)
        return sim_err_set(err, SIM_EDEVICE, "%s", sim_errmsg(s));
    char path[SIM_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/fields/field_%06" PRId64 ".npy", dir, sim_steps_done(s));
    return app_write_npy(path, buf, sc->width, sc->height, err);
}

static int write_run_json(const char *dir, const sim_scenario *sc, const char *backend,
                          int threads, int64_t steps, double wall, uint64_t checksum,
                          sim_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return sim_err_set(err, SIM_ENOMEM, "out of memory for run.json");
    fprintf(m, "{\n  \"version\": \"%s\",\n  \"backend\": \"%s\",\n  \"threads\": %d,\n"
            "  \"seed\": %" PRIu64 ",\n  \"steps\": %" PRId64 ",\n  \"wall_seconds\": %.3f,\n"
            "  \"steps_per_second\": %.3f,\n  \"final_checksum\": \"%016" PRIx64 "\",\n"
            "  \"scenario\": ", HORIZON_VERSION, backend, threads, sc->seed, steps, wall,
            wall > 0 ? (double)steps / wall : 0.0, checksum);
    sim_scenario_write_json(sc, m, 2);
    fputs("\n}\n", m);
    fclose(m);
    char path[SIM_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/run.json", dir);
    int rc = app_write_atomic(path, text, len, err);
    free(text);
    return rc;
}

static int parse_args(int argc, char **argv, run_opts *o, sim_scenario *sc)
{
    memset(o, 0, sizeof *o);
    o->backend = "auto";
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
        } else if (strcmp(a, "--force") == 0) {
            o->force = 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            o->quiet = 1;
        } else if (strcmp(a, "--progress") == 0) {
            o->progress = 1;
        } else if (a[0] == '-') {
            size_t k;
            for (k = 0; k < sizeof shortcuts / sizeof shortcuts[0]; k++)
                if (app_opt(argc, argv, &i, shortcuts[k].opt, &v, &bad))
                    break;
            if (k == sizeof shortcuts / sizeof shortcuts[0]) {
                fprintf(stderr, "horizon run: unknown option '%s' (see horizon run --help)\n", a);
                bad = 1;
            } else if (!bad) {
                size_t n = strlen(shortcuts[k].key) + strlen(v) + 2;
                char *s = malloc(n);
                if (!s) {
                    bad = 1;
                    break;
                }
                snprintf(s, n, "%s=%s", shortcuts[k].key, v);
                owned[n_owned++] = sets[o->n_sets++] = s;
            }
        } else if (!o->scenario) {
            o->scenario = a;
        } else {
            fprintf(stderr, "horizon run: more than one scenario given ('%s' and '%s')\n",
                    o->scenario, a);
            bad = 1;
        }
    }
    if (!bad)
        rc = app_load_scenario(o->scenario, o->sets, o->n_sets, sc);
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

int app_run_main(int argc, char **argv)
{
    run_opts o;
    sim_scenario sc;
    int rc = parse_args(argc, argv, &o, &sc);
    if (rc == -1)
        return APP_EXIT_OK;
    if (rc != SIM_OK)
        return app_exit_code(rc == SIM_EIO ? SIM_EINVAL : rc);

    const sim_backend_ops *ops;
    rc = app_pick_backend(o.backend, &ops, o.quiet);
    if (rc != SIM_OK)
        return app_exit_code(rc);
    int threads = app_threads(o.threads);
    const char *dir = sc.dir;

    sim_err err = {{0}};
    sim *s = NULL;
    FILE *stats = NULL;
    frames fr;
    memset(&fr, 0, sizeof fr);
    float *dump = NULL;
    int64_t cells = (int64_t)sc.width * sc.height;
    char stats_path[SIM_PATH_MAX + 16];
    snprintf(stats_path, sizeof stats_path, "%s/stats.csv", dir);

    rc = app_output_prepare(dir, o.force, sc.frames_every > 0, sc.dump_fields_every > 0, &err);
    if (rc != SIM_OK)
        goto fail;
    rc = sim_create(&sc, ops, threads, &s, &err);
    if (rc != SIM_OK)
        goto fail;
    if (sc.stats_every > 0 && (rc = app_stats_open(dir, &stats, &err)) != SIM_OK)
        goto fail;
    if (sc.frames_every > 0 && (rc = frames_init(&fr, &sc, sim_agent_count(s), &err)) != SIM_OK)
        goto fail;
    if (sc.dump_fields_every > 0 && !(dump = malloc((size_t)cells * sizeof *dump))) {
        rc = sim_err_set(&err, SIM_ENOMEM, "out of memory for field dumps");
        goto fail;
    }
    if (!o.quiet)
        fprintf(stderr, "horizon: %dx%d world, %lld agents, r=%d, %lld steps on %s%s\n",
                sc.width, sc.height, (long long)sim_agent_count(s), sc.radius,
                (long long)sc.steps, ops->name,
                strcmp(ops->name, "cpu") == 0 ? (threads == 1 ? " (1 thread)" : "") : "");

    /* Step 0 (the initial state) gets a frame and a dump too. */
    if (sc.frames_every > 0 && (rc = frames_emit(&fr, s, dir, &err)) != SIM_OK)
        goto fail;
    if (sc.dump_fields_every > 0 && (rc = dump_field(s, dump, dir, &err)) != SIM_OK)
        goto fail;

    app_progress prog;
    app_progress_start(&prog, o.quiet ? -1 : o.progress, 0, sc.steps);
    double t0 = app_now();
    uint64_t checksum = 0;
    for (int64_t k = 1; k <= sc.steps; k++) {
        int want = due(k, sc.stats_every);
        sim_stats st;
        rc = sim_step(s, want, &st);
        if (rc != SIM_OK) {
            sim_err_set(&err, rc, "step %lld: %s", (long long)k, sim_errmsg(s));
            goto fail;
        }
        if (want) {
            checksum = st.checksum;
            if ((rc = app_stats_row(stats, &st, stats_path, &err)) != SIM_OK)
                goto fail;
        }
        if (due(k, sc.frames_every) && (rc = frames_emit(&fr, s, dir, &err)) != SIM_OK)
            goto fail;
        if (due(k, sc.dump_fields_every) && (rc = dump_field(s, dump, dir, &err)) != SIM_OK)
            goto fail;
        app_progress_update(&prog, k);
    }
    if (fr.queue && (rc = render_queue_finish(fr.queue, &err)) != SIM_OK)
        goto fail;
    double wall = app_now() - t0;
    app_progress_end(&prog, sc.steps);
    if (!due(sc.steps, sc.stats_every) && (rc = sim_checksum(s, &checksum)) != SIM_OK) {
        sim_err_set(&err, rc, "%s", sim_errmsg(s));
        goto fail;
    }
    if (stats && fclose(stats) != 0) {
        stats = NULL;
        rc = sim_err_set(&err, SIM_EIO, "%s: write failed", stats_path);
        goto fail;
    }
    stats = NULL;
    rc = write_run_json(dir, &sc, ops->name, threads, sc.steps, wall, checksum, &err);
    if (rc != SIM_OK)
        goto fail;
    if (!o.quiet) {
        printf("done: %lld steps in %.2f s (%.1f steps/s), final checksum %016" PRIx64 "\n",
               (long long)sc.steps, wall, wall > 0 ? (double)sc.steps / wall : 0.0, checksum);
        printf("output: %s/ (stats.csv, run.json%s%s)\n", dir,
               sc.frames_every > 0 ? ", frames/" : "", sc.dump_fields_every > 0 ? ", fields/" : "");
        if (sc.frames_every > 0)
            printf("video:  ffmpeg -framerate 30 -i %s/frames/frame_%%06d.png -c:v libx264 "
                   "-pix_fmt yuv420p %s/run.mp4\n", dir, dir);
    }
    frames_release(&fr);
    free(dump);
    sim_destroy(s);
    return APP_EXIT_OK;

fail:
    fprintf(stderr, "horizon: %s\n", err.msg);
    if (fr.queue)
        render_queue_finish(fr.queue, &err);
    if (stats)
        fclose(stats);
    frames_release(&fr);
    free(dump);
    sim_destroy(s);
    return app_exit_code(rc);
}
