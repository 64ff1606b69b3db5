/* app_sweep.c - `horizon sweep`: the runs of a sweep file (sim_sweep.h), many at once in one
 * process (worker threads, each with its own simulation: on the GPU each instance has its own
 * stream, so small worlds share the device instead of time-slicing it between processes), over
 * the GPUs of the machine and, under mpirun, over ranks. Writes DIR/sweep.csv (one row per
 * run, streamed as runs finish), DIR/sweep.json, and per-run files when asked; an interrupted
 * sweep goes on where it stopped when the same command is given again.
 *
 * Threads: the main thread owns the output files and, under MPI, all MPI calls; workers take
 * run indices from a shared counter and hand their finished rows to it through a list under
 * one mutex. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "app_models.h"
#include "app_output.h"
#include "app_progress.h"
#include "app_signal.h"
#include "app_sweep.h"
#include "sim_outdir.h"
#ifdef HORIZON_HAVE_CUDA
#include "gpu_backend.h"
#endif

static const char sweep_usage[] =
    "usage: horizon sweep SWEEP.ini [options]\n"
    "\n"
    "Runs every run of a sweep file (a base scenario, swept keys, replicates; see the README)\n"
    "and writes DIR/sweep.csv, one row per run as runs finish, and DIR/sweep.json. Each run is\n"
    "the run `horizon run` would do with its parameters: the same final checksum. Given again\n"
    "with the same DIR, it skips the runs already in sweep.csv.\n"
    "\n"
    "options:\n"
    "  --out DIR          output directory (default sweep-out)\n"
    "  --set SECTION.KEY=VALUE  override a key of the base scenario (repeatable)\n"
    "  --backend auto|cpu|cuda  engine (default auto: CUDA when a GPU is usable)\n"
    "  --gpus LIST        CUDA devices to use, e.g. 0,1 (default: all)\n"
    "  --jobs N           runs at once in this process (default: CPU: one per core; CUDA: 16\n"
    "                     per GPU)\n"
    "  --threads N        CPU threads per run (default: cores / jobs, at least 1)\n"
    "  --window K         the mean_* columns average the last K steps (default 20)\n"
    "  --keep WHAT        per-run files in DIR/runs/run_NNNNNN/: stats (stats.csv), frames\n"
    "                     (frames/, when the scenario writes frames), or stats,frames\n"
    "  --dry-run          list the runs (and the horizon run command of each) and exit\n"
    "  --resume           insist on going on with the sweep in DIR (the default when DIR\n"
    "                     holds this sweep)\n"
    "  --force            start the sweep in DIR over (removes its sweep.csv, sweep.json and\n"
    "                     runs/)\n"
    "  --progress         frequent progress lines when stderr is not a terminal\n"
    "  --quiet            no progress and no summary\n"
    "  -h, --help         this help\n"
    "\n"
    "Under mpirun (`mpirun -np 4 horizon sweep FILE`) the runs are spread over the ranks; rank\n"
    "0 writes the same files as without MPI.\n";

#define MAX_GPUS 64

typedef struct sweep_opts {
    const char *file, *dir, *backend, *gpus, *keep;
    char **sets;
    int n_sets;
    int jobs, threads, dry_run, resume, force, quiet, progress;
    int64_t window;
} sweep_opts;

/* A finished row on its way from a worker to the main thread. */
typedef struct row_node {
    struct row_node *next;
    char text[];
} row_node;

typedef struct sweep_ctx {
    const sim_sweep *sw;
    app_sweep_plan plan;
    int rank, nranks;
    int64_t runs;
    uint8_t *done; /* bit per run: recorded in sweep.csv (the same on every rank) */
    int ngpus, gpus[MAX_GPUS];

    pthread_mutex_t mu;
    pthread_cond_t cv; /* a row is waiting, or a worker ended */
    int64_t next;      /* the next run index a worker looks at */
    row_node *head, *tail;
    int live;          /* workers still running */
    int failed;        /* a run failed: no new runs start */
    int fail_rc;
    sim_err fail_err;

    int csv_fd; /* rank 0: sweep.csv, appended one whole row per write */
    int64_t written, todo;
} sweep_ctx;

static int is_done(const sweep_ctx *c, int64_t run)
{
    return (c->done[run >> 3] >> (run & 7)) & 1;
}

static void set_done(sweep_ctx *c, int64_t run)
{
    c->done[run >> 3] |= (uint8_t)(1u << (run & 7));
}

/* ---- workers ---- */

typedef struct worker {
    sweep_ctx *c;
    int index;
    pthread_t thread;
} worker;

/* The next run of this rank not yet recorded, or -1 when there is none or no new run should
 * start (a signal, a failed run). */
static int64_t take_run(sweep_ctx *c)
{
    int64_t run = -1;
    pthread_mutex_lock(&c->mu);
    while (!c->failed && !app_signal_pending() && c->next < c->runs) {
        int64_t i = c->next++;
        if (i % c->nranks == c->rank && !is_done(c, i)) {
            run = i;
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return run;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    sweep_ctx *c = w->c;
    sim_err err = {{0}};
    int rc = SIM_OK;
    char *row = malloc(APP_SWEEP_ROW_MAX);
    if (!row)
        rc = sim_err_set(&err, SIM_ENOMEM, "out of memory for a sweep worker");
#ifdef HORIZON_HAVE_CUDA
    /* Each worker keeps to one device: its instances live and are stepped there. */
    if (rc == SIM_OK && strcmp(c->plan.ops->name, "cuda") == 0)
        rc = gpu_use_device(c->gpus[w->index % c->ngpus], &err);
#endif
    for (int64_t run; rc == SIM_OK && (run = take_run(c)) >= 0;) {
        rc = app_sweep_run(c->sw, run, &c->plan, NULL, row, APP_SWEEP_ROW_MAX, &err);
        if (rc != SIM_OK)
            break;
        size_t len = strlen(row);
        row_node *node = malloc(sizeof *node + len + 1);
        if (!node) {
            rc = sim_err_set(&err, SIM_ENOMEM, "run %" PRId64 ": out of memory", run);
            break;
        }
        node->next = NULL;
        memcpy(node->text, row, len + 1);
        pthread_mutex_lock(&c->mu);
        if (c->tail)
            c->tail->next = node;
        else
            c->head = node;
        c->tail = node;
        pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->mu);
    }
    free(row);
    pthread_mutex_lock(&c->mu);
    if (rc != SIM_OK && !c->failed) {
        c->failed = 1;
        c->fail_rc = rc;
        c->fail_err = err;
    }
    c->live--;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* ---- the output directory (rank 0) ---- */

/* The expanded sweep as JSON text (malloc'ed), the identity of a sweep in its directory. */
static char *sweep_json_text(const sim_sweep *sw)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return NULL;
    sim_sweep_write_json(sw, m, 2);
    if (fclose(m) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Removes the lines that name paths ("file", "base") from a sweep's JSON text, in place: the
 * same sweep given by another path (or from another directory) is the same sweep. Its contents,
 * the base scenario included, stay in the text and are compared. */
static void strip_paths(char *text)
{
    char *w = text;
    for (char *r = text; *r;) {
        size_t n = strcspn(r, "\n");
        int drop = strncmp(r, "    \"file\": ", 12) == 0 || strncmp(r, "    \"base\": ", 12) == 0;
        if (!drop) {
            memmove(w, r, n + (r[n] == '\n'));
            w += n + (r[n] == '\n');
        }
        r += n + (r[n] == '\n');
    }
    *w = '\0';
}

static char *read_text(const char *path, size_t limit)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(limit + 1);
    size_t n = buf ? fread(buf, 1, limit, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

static int write_sweep_json(const sweep_ctx *c, const sweep_opts *o, const char *spec,
                            double wall, int complete, sim_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return sim_err_set(err, SIM_ENOMEM, "out of memory for sweep.json");
    fprintf(m, "{\n  \"version\": \"%s\",\n  \"backend\": \"%s\",\n  \"ranks\": %d,\n"
            "  \"jobs\": %d,\n  \"threads_per_run\": %d,\n  \"window\": %" PRId64 ",\n",
            HORIZON_VERSION, c->plan.ops->name, c->nranks, o->jobs, c->plan.threads,
            c->plan.window);
    fputs("  \"gpus\": [", m);
    for (int g = 0; strcmp(c->plan.ops->name, "cuda") == 0 && g < c->ngpus; g++)
        fprintf(m, "%s%d", g ? ", " : "", c->gpus[g]);
    fprintf(m, "],\n  \"complete\": %s,\n  \"runs\": %" PRId64 ",\n  \"runs_done\": %" PRId64
            ",\n  \"wall_seconds\": %.3f,\n  \"sweep\": %s\n}\n", complete ? "true" : "false",
            c->runs, c->runs - c->todo + c->written, wall, spec);
    fclose(m);
    char path[SIM_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/sweep.json", o->dir);
    int rc = app_write_atomic(path, text, len, err);
    free(text);
    return rc;
}

/* DIR/base.ini: the base scenario with the sweep's fixed values and --set, so that run N is
 * `horizon run DIR/base.ini` plus the arguments --dry-run lists for it. */
static int write_base_ini(const sim_sweep *sw, const char *dir, sim_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return sim_err_set(err, SIM_ENOMEM, "out of memory for base.ini");
    fprintf(m, "; The base scenario of the sweep %s (with its fixed values and --set).\n",
            sim_sweep_path(sw));
    sim_scenario_write_ini(sim_sweep_base(sw), m);
    fclose(m);
    char path[SIM_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/base.ini", dir);
    int rc = app_write_atomic(path, text, len, err);
    free(text);
    return rc;
}

/* Reads the rows already in DIR/sweep.csv into the done bitmap and cuts a partial last row (a
 * sweep killed mid-write). The header must be this sweep's. */
static int read_done_rows(sweep_ctx *c, const char *path, const char *header, sim_err *err)
{
    FILE *f = fopen(path, "r+b");
    if (!f)
        return errno == ENOENT ? SIM_OK
                               : sim_err_set(err, SIM_EIO, "%s: cannot open: %s", path,
                                             strerror(errno));
    char *line = malloc(APP_SWEEP_ROW_MAX + 2);
    if (!line) {
        fclose(f);
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    }
    off_t keep = 0;
    int lines = 0, rc = SIM_OK;
    while (fgets(line, APP_SWEEP_ROW_MAX + 2, f)) {
        size_t n = strlen(line);
        if (n == 0 || line[n - 1] != '\n')
            break; /* the partial last row of a killed sweep */
        if (lines++ == 0) {
            if (strcmp(line, header) != 0) {
                rc = sim_err_set(err, SIM_EINVAL, "%s: not the sweep.csv of this sweep "
                                 "(different header); use --force to start over, or another "
                                 "--out", path);
                break;
            }
        } else {
            char *end;
            errno = 0;
            long long run = strtoll(line, &end, 10);
            if (end == line || *end != ',' || errno || run < 0 || run >= c->runs) {
                rc = sim_err_set(err, SIM_EINVAL, "%s:%d: not a row of this sweep", path, lines);
                break;
            }
            set_done(c, run);
        }
        keep = ftello(f);
    }
    free(line);
    if (rc == SIM_OK && ftruncate(fileno(f), keep) != 0)
        rc = sim_err_set(err, SIM_EIO, "%s: cannot truncate: %s", path, strerror(errno));
    fclose(f);
    return rc;
}

/* Removes the files of an earlier sweep (--force): sweep.csv, sweep.json and runs/run_N/ with
 * the files a run writes there. Anything else stays. */
static int remove_earlier_sweep(const char *dir, sim_err *err)
{
    static const char *const top[] = {"sweep.csv", "sweep.json", "sweep.json.tmp", "base.ini",
                                      "base.ini.tmp"};
    char path[SIM_PATH_MAX + 64];
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, top[i]);
        if (unlink(path) != 0 && errno != ENOENT)
            return sim_err_set(err, SIM_EIO, "%s: cannot remove: %s", path, strerror(errno));
    }
    snprintf(path, sizeof path, "%s/runs", dir);
    return app_output_remove_runs(path, err);
}

/* Rank 0: makes and locks DIR, decides between a new sweep, going on with the one there, and
 * refusing; fills the done bitmap; opens sweep.csv for appending. */
static int open_dir(sweep_ctx *c, const sweep_opts *o, const char *spec, const char *header,
                    int *lock_fd, sim_err *err)
{
    int rc = sim_outdir_make(o->dir, NULL, err);
    if (rc == SIM_OK)
        rc = sim_outdir_lock(o->dir, lock_fd, err);
    if (rc != SIM_OK)
        return rc;
    char path[SIM_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/sweep.json", o->dir);
    char *old = read_text(path, 64 << 20);
    char *mine = strdup(spec), window[64];
    if (old && mine) {
        strip_paths(old);
        strip_paths(mine);
    }
    /* The window changes the mean_* columns: part of what makes two sweeps the same. */
    snprintf(window, sizeof window, "\"window\": %" PRId64 ",", c->plan.window);
    int same = old && mine && strstr(old, mine) != NULL && strstr(old, window) != NULL;
    free(mine);
    int had = old != NULL;
    free(old);
    if (o->force) {
        rc = remove_earlier_sweep(o->dir, err);
    } else if (had && !same) {
        rc = sim_err_set(err, SIM_EINVAL, "%s: holds a different sweep (its sweep.json); use "
                         "--force to replace it, or another --out", o->dir);
    } else if (!had && o->resume) {
        rc = sim_err_set(err, SIM_EINVAL, "%s: --resume: no sweep to resume there (no "
                         "sweep.json)", o->dir);
    } else if (!had && !app_output_dir_is_empty(o->dir)) {
        rc = sim_err_set(err, SIM_EINVAL, "%s: output directory is not empty and holds no "
                         "sweep; use --force to start a sweep there anyway, or another --out",
                         o->dir);
    }
    snprintf(path, sizeof path, "%s/sweep.csv", o->dir);
    if (rc == SIM_OK && same && !o->force)
        rc = read_done_rows(c, path, header, err);
    if (rc == SIM_OK)
        rc = write_base_ini(c->sw, o->dir, err);
    if (rc != SIM_OK)
        return rc;
    c->csv_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (c->csv_fd < 0)
        return sim_err_set(err, SIM_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(c->csv_fd, &st) == 0 && st.st_size == 0 &&
        write(c->csv_fd, header, strlen(header)) != (ssize_t)strlen(header))
        return sim_err_set(err, SIM_EIO, "%s: write failed: %s", path, strerror(errno));
    return SIM_OK;
}

/* Appends one row to sweep.csv in one write, so that a killed sweep leaves whole rows (and at
 * most one partial last row, which the next start cuts). */
static int write_row(sweep_ctx *c, const char *row, const char *dir, sim_err *err)
{
    size_t len = strlen(row);
    if (write(c->csv_fd, row, len) != (ssize_t)len)
        return sim_err_set(err, SIM_EIO, "%s/sweep.csv: write failed: %s", dir,
                           strerror(errno));
    c->written++;
    long long run = strtoll(row, NULL, 10);
    if (run >= 0 && run < c->runs) {
        pthread_mutex_lock(&c->mu); /* workers read the bitmap in take_run */
        set_done(c, run);
        pthread_mutex_unlock(&c->mu);
    }
    return SIM_OK;
}

static int cmp_row(const void *a, const void *b)
{
    long long x = atoll(*(char *const *)a), y = atoll(*(char *const *)b);
    return (x > y) - (x < y);
}

/* Once every run is recorded: sweep.csv rewritten in run order (atomically), so that a finished
 * sweep's file is the same bytes however its runs were spread, interrupted or resumed. Holds one
 * row per run for the moment it takes. */
static int sort_rows(const char *dir, sim_err *err)
{
    char path[SIM_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return sim_err_set(err, SIM_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (len + n + 1 > cap) {
            size_t want = (len + n + 1) * 2;
            char *more = realloc(text, want);
            if (!more) {
                free(text);
                fclose(f);
                return sim_err_set(err, SIM_ENOMEM, "out of memory sorting %s", path);
            }
            text = more;
            cap = want;
        }
        memcpy(text + len, buf, n);
        len += n;
    }
    fclose(f);
    if (!text)
        return SIM_OK;
    text[len] = '\0';
    size_t rows = 0;
    for (size_t i = 0; i < len; i++)
        rows += text[i] == '\n';
    char **line = malloc((rows + 1) * sizeof *line);
    char *out = malloc(len + 1);
    int rc = SIM_OK;
    if (!line || !out) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory sorting %s", path);
    } else {
        size_t k = 0;
        for (char *p = text; *p && k <= rows; k++) {
            line[k] = p;
            char *nl = strchr(p, '\n');
            if (!nl)
                break;
            p = nl + 1;
        }
        if (k > 2)
            qsort(line + 1, k - 1, sizeof *line, cmp_row);
        size_t used = 0;
        for (size_t i = 0; i < k; i++) {
            size_t m = strcspn(line[i], "\n") + 1;
            memcpy(out + used, line[i], m);
            used += m;
        }
        rc = app_write_atomic(path, out, used, err);
    }
    free(line);
    free(out);
    free(text);
    return rc;
}

/* ---- options ---- */

static int parse_gpus(const char *text, sweep_ctx *c, int available)
{
    c->ngpus = 0;
    if (!text || strcmp(text, "all") == 0) {
        for (int g = 0; g < available && g < MAX_GPUS; g++)
            c->gpus[c->ngpus++] = g;
        return 1;
    }
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        long g = strtol(p, &end, 10);
        if (end == p || errno || g < 0 || g >= available || c->ngpus >= MAX_GPUS ||
            (*end != ',' && *end != '\0')) {
            fprintf(stderr, "horizon: --gpus: '%s' is not a list of devices in 0 .. %d\n", text,
                    available - 1);
            return 0;
        }
        c->gpus[c->ngpus++] = (int)g;
        p = *end == ',' ? end + 1 : end;
    }
    return c->ngpus > 0;
}

static int parse_args(int argc, char **argv, sweep_opts *o)
{
    memset(o, 0, sizeof *o);
    o->dir = "sweep-out";
    o->backend = "auto";
    o->window = 20;
    o->sets = calloc((size_t)argc + 1, sizeof *o->sets);
    if (!o->sets) {
        fprintf(stderr, "horizon: out of memory\n");
        return SIM_ENOMEM;
    }
    int bad = 0;
    for (int i = 1; i < argc && !bad; i++) {
        const char *v = NULL, *a = argv[i];
        int64_t n = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(sweep_usage, stdout);
            return -1;
        } else if (app_opt(argc, argv, &i, "--set", &v, &bad)) {
            if (!bad)
                o->sets[o->n_sets++] = (char *)v;
        } else if (app_opt(argc, argv, &i, "--out", &v, &bad)) {
            o->dir = v;
        } else if (app_opt(argc, argv, &i, "--backend", &v, &bad)) {
            o->backend = v;
        } else if (app_opt(argc, argv, &i, "--gpus", &v, &bad)) {
            o->gpus = v;
        } else if (app_opt(argc, argv, &i, "--keep", &v, &bad)) {
            o->keep = v;
            if (!bad && strcmp(v, "stats") != 0 && strcmp(v, "frames") != 0 &&
                strcmp(v, "stats,frames") != 0 && strcmp(v, "frames,stats") != 0) {
                fprintf(stderr, "horizon: --keep: '%s' (allowed stats, frames, stats,frames)\n",
                        v);
                bad = 1;
            }
        } else if (app_opt(argc, argv, &i, "--jobs", &v, &bad)) {
            bad = bad || !app_parse_i64("--jobs", v, 1, 4096, &n);
            o->jobs = (int)n;
        } else if (app_opt(argc, argv, &i, "--threads", &v, &bad)) {
            bad = bad || !app_parse_i64("--threads", v, 1, 4096, &n);
            o->threads = (int)n;
        } else if (app_opt(argc, argv, &i, "--window", &v, &bad)) {
            bad = bad || !app_parse_i64("--window", v, 1, INT64_MAX, &o->window);
        } else if (strcmp(a, "--dry-run") == 0) {
            o->dry_run = 1;
        } else if (strcmp(a, "--resume") == 0) {
            o->resume = 1;
        } else if (strcmp(a, "--force") == 0) {
            o->force = 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            o->quiet = 1;
        } else if (strcmp(a, "--progress") == 0) {
            o->progress = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "horizon sweep: unknown option '%s' (see horizon sweep --help)\n", a);
            bad = 1;
        } else if (!o->file) {
            o->file = a;
        } else {
            fprintf(stderr, "horizon sweep: more than one sweep file given ('%s' and '%s')\n",
                    o->file, a);
            bad = 1;
        }
    }
    if (!bad && !o->file) {
        fprintf(stderr, "horizon sweep: no sweep file given (see horizon sweep --help)\n");
        bad = 1;
    }
    if (!bad && o->resume && o->force) {
        fprintf(stderr, "horizon sweep: --resume and --force contradict each other\n");
        bad = 1;
    }
    return bad ? SIM_EINVAL : SIM_OK;
}

static void dry_run(const sim_sweep *sw)
{
    int64_t runs = sim_sweep_runs(sw);
    char args[4096];
    printf("%" PRId64 " runs (%s of %d key%s, %d replicate%s), base %s\n"
           "(a sweep writes its base scenario with the fixed values to DIR/base.ini; run N is\n"
           " horizon run DIR/base.ini and the arguments below)\n", runs,
           sim_sweep_combine(sw), sim_sweep_keys(sw), sim_sweep_keys(sw) == 1 ? "" : "s",
           sim_sweep_replicates(sw), sim_sweep_replicates(sw) == 1 ? "" : "s",
           sim_sweep_base_name(sw));
    for (int64_t r = 0; r < runs; r++) {
        sim_sweep_run_args(sw, r, args, sizeof args);
        printf("run %" PRId64 ":", r);
        for (int k = 0; k < sim_sweep_keys(sw); k++)
            printf(" %s=%s", sim_sweep_key(sw, k), sim_sweep_value(sw, r, k));
        printf(" replicate=%d seed=%" PRIu64 "  (%s)\n", sim_sweep_replicate(sw, r),
               sim_sweep_seed(sw, r), args);
    }
}

/* ---- the sweep ---- */

static int cores_online(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Rank 0, when a signal arrives while other ranks still work (mpirun sends SIGTERM to every rank
 * when one of them dies): says at once which ranks have not finished and which of their runs
 * are not recorded, since mpirun may kill this rank too before the runs in flight end. */
static void report_unfinished(const sweep_ctx *c, const uint8_t *rank_done)
{
    fprintf(stderr, "horizon: signal while ranks work:");
    for (int r = 1; r < c->nranks; r++)
        if (!rank_done[r])
            fprintf(stderr, " rank %d", r);
    fprintf(stderr, " not finished; runs not recorded in sweep.csv:");
    int64_t missing = 0;
    for (int64_t i = 0; i < c->runs; i++) {
        if (is_done(c, i))
            continue;
        if (missing++ < 20)
            fprintf(stderr, " %" PRId64, i);
    }
    fprintf(stderr, "%s (%" PRId64 " runs); the same command goes on with them\n",
            missing > 20 ? " ..." : "", missing);
}

/* Moves the finished rows to their destination: sweep.csv on rank 0, rank 0 elsewhere. */
static int drain_rows(sweep_ctx *c, const char *dir, sim_err *err)
{
    pthread_mutex_lock(&c->mu);
    row_node *list = c->head;
    c->head = c->tail = NULL;
    pthread_mutex_unlock(&c->mu);
    int rc = SIM_OK;
    while (list) {
        row_node *next = list->next;
        if (rc == SIM_OK) {
            if (c->rank == 0)
                rc = write_row(c, list->text, dir, err);
            else {
                app_mpi_send(APP_MPI_ROW, list->text);
                c->written++;
            }
        }
        free(list);
        list = next;
    }
    return rc;
}

int app_sweep_main(int argc, char **argv)
{
    sweep_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc != SIM_OK) {
        free(o.sets);
        return rc == -1 ? APP_EXIT_OK : app_exit_code(rc);
    }
    sweep_ctx c;
    memset(&c, 0, sizeof c);
    c.csv_fd = -1;
    sim_err err = {{0}};
    sim_sweep *sw = NULL;
    int lock_fd = -1;
    char *spec = NULL;
    worker *workers = NULL;
    int nworkers = 0, exit_code = APP_EXIT_OK, signalled = 0;
    app_signals old_signals;
    int signals_on = 0;
    double t0 = app_now();

    if ((rc = app_mpi_start(&c.rank, &c.nranks, &err)) != SIM_OK)
        goto fail;
    /* The sweep's own time (sweep.json's wall_seconds), from here: the launch of the ranks and
     * MPI's start are mpirun's, and are not the sweep's rate. */
    t0 = app_now();
    sim_sweep_set_resolver(app_models_resolve); /* base = a model of the library */
    if ((rc = sim_sweep_load(o.file, o.sets, o.n_sets, &sw, &err)) != SIM_OK)
        goto fail;
    if (o.dry_run) {
        if (c.rank == 0)
            dry_run(sw);
        goto done;
    }
    c.sw = sw;
    c.runs = sim_sweep_runs(sw);
    if ((rc = app_pick_backend(o.backend, &c.plan.ops, o.quiet || c.rank > 0)) != SIM_OK)
        goto fail_quiet;
    int is_cuda = strcmp(c.plan.ops->name, "cuda") == 0;
    int cores = app_threads(0);
#ifdef HORIZON_HAVE_CUDA
    if (is_cuda && !parse_gpus(o.gpus, &c, gpu_probe(NULL, 0))) {
        rc = SIM_EINVAL;
        goto fail_quiet;
    }
#else
    (void)parse_gpus;
#endif
    if (!is_cuda && o.gpus && c.rank == 0 && !o.quiet)
        fprintf(stderr, "horizon: --gpus is ignored by the %s backend\n", c.plan.ops->name);
    /* Runs of this rank still to do decide how many workers are worth starting. */
    int64_t mine = c.runs / c.nranks + (c.rank < c.runs % c.nranks);
    if (o.jobs == 0)
        o.jobs = is_cuda ? 16 * c.ngpus : cores;
    if (o.jobs > mine)
        o.jobs = (int)(mine > 0 ? mine : 1);
    c.plan.threads = o.threads > 0 ? o.threads : (is_cuda ? 1 : (cores / o.jobs > 0 ? cores / o.jobs : 1));
    c.plan.window = o.window;
    c.plan.keep_stats = o.keep && strstr(o.keep, "stats") != NULL;
    c.plan.keep_frames = o.keep && strstr(o.keep, "frames") != NULL;
    c.plan.dir = o.dir;
    c.done = calloc((size_t)(c.runs / 8 + 1), 1);
    char header[APP_SWEEP_ROW_MAX];
    spec = sweep_json_text(sw);
    if (!c.done || !spec) {
        rc = sim_err_set(&err, SIM_ENOMEM, "out of memory for a sweep of %" PRId64 " runs",
                         c.runs);
        goto fail;
    }
    if ((rc = app_sweep_header(sw, header, sizeof header, &err)) != SIM_OK)
        goto fail;

    /* Rank 0 sets up the directory; every rank learns the outcome and which runs are done. */
    int status = SIM_OK;
    if (c.rank == 0) {
        status = open_dir(&c, &o, spec, header, &lock_fd, &err);
        if (status == SIM_OK)
            status = write_sweep_json(&c, &o, spec, 0.0, 0, &err);
    }
    app_mpi_bcast(&status, sizeof status);
    if (status != SIM_OK) {
        rc = status;
        if (c.rank == 0)
            goto fail;
        goto fail_quiet;
    }
    app_mpi_bcast(c.done, (size_t)(c.runs / 8 + 1));
    for (int64_t r = 0; r < c.runs; r++)
        c.todo += !is_done(&c, r);
    int64_t recorded = c.runs - c.todo;
    /* mpirun binds each rank to one core by default (2 ranks or fewer): the workers of a rank
     * would then share that core. Say so; the binding is the user's to choose. */
    cpu_set_t allowed;
    if (c.nranks > 1 && c.rank == 0 && sched_getaffinity(0, sizeof allowed, &allowed) == 0 &&
        CPU_COUNT(&allowed) < o.jobs && CPU_COUNT(&allowed) < cores_online())
        fprintf(stderr, "horizon: warning: this rank may use %d of the machine's cores for %d "
                "runs at once (mpirun's core binding); use mpirun --bind-to none, or "
                "--map-by slot:PE=N to give each rank N cores\n", CPU_COUNT(&allowed), o.jobs);
    if (c.rank == 0 && !o.quiet) {
        fprintf(stderr, "horizon: sweep %s: %" PRId64 " runs", o.file, c.runs);
        if (recorded)
            fprintf(stderr, " (%" PRId64 " already in %s/sweep.csv)", recorded, o.dir);
        fprintf(stderr, " on %s, %d at once%s", c.plan.ops->name, o.jobs,
                c.nranks > 1 ? " per rank" : "");
        if (c.nranks > 1)
            fprintf(stderr, ", %d ranks", c.nranks);
        if (is_cuda)
            fprintf(stderr, ", %d GPU%s", c.ngpus, c.ngpus == 1 ? "" : "s");
        else
            fprintf(stderr, ", %d thread%s per run", c.plan.threads,
                    c.plan.threads == 1 ? "" : "s");
        fputc('\n', stderr);
    }

#ifdef HORIZON_HAVE_CUDA
    /* Equal worlds one after another: each run takes the memory the last one gave back. */
    if (is_cuda)
        gpu_alloc_pool(1);
#endif
    app_signals_install(&old_signals);
    signals_on = 1;
    pthread_mutex_init(&c.mu, NULL);
    pthread_cond_init(&c.cv, NULL);
    workers = calloc((size_t)o.jobs, sizeof *workers);
    if (!workers) {
        rc = sim_err_set(&err, SIM_ENOMEM, "out of memory for %d workers", o.jobs);
        goto fail;
    }
    for (int w = 0; w < o.jobs; w++) {
        workers[w].c = &c;
        workers[w].index = w;
        pthread_mutex_lock(&c.mu);
        c.live++;
        pthread_mutex_unlock(&c.mu);
        if (pthread_create(&workers[w].thread, NULL, worker_main, &workers[w]) != 0) {
            pthread_mutex_lock(&c.mu);
            c.live--;
            pthread_mutex_unlock(&c.mu);
            break;
        }
        nworkers++;
    }

    /* The main loop: rows to their place, messages from other ranks, progress. */
    app_progress prog;
    app_progress_start(&prog, (o.quiet || c.rank > 0) ? -1 : o.progress, 0, c.todo);
    prog.unit = "run";
    int ranks_done = 0, remote_failed = 0, remote_rc = SIM_OK, reported = 0;
    uint8_t rank_done[4096] = {0};
    sim_err remote_err = {{0}};
    int write_rc = SIM_OK;
    char *msg = malloc(APP_SWEEP_ROW_MAX + 1024);
    if (!msg) {
        rc = sim_err_set(&err, SIM_ENOMEM, "out of memory");
        goto fail;
    }
    for (;;) {
        pthread_mutex_lock(&c.mu);
        if (!c.head && c.live > 0) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += c.nranks > 1 ? 2000000 : 100000000; /* MPI messages need polling */
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&c.cv, &c.mu, &ts);
        }
        int live = c.live;
        pthread_mutex_unlock(&c.mu);
        if (write_rc == SIM_OK && (write_rc = drain_rows(&c, o.dir, &err)) != SIM_OK) {
            /* sweep.csv cannot be written: stop starting runs */
            pthread_mutex_lock(&c.mu);
            c.failed = 1;
            pthread_mutex_unlock(&c.mu);
        } else if (write_rc != SIM_OK) {
            sim_err scratch;
            drain_rows(&c, o.dir, &scratch); /* frees them */
        }
        int tag, src;
        while (c.rank == 0 && app_mpi_poll(&tag, &src, msg, APP_SWEEP_ROW_MAX + 1024)) {
            if (tag == APP_MPI_ROW) {
                if (write_rc == SIM_OK)
                    write_rc = write_row(&c, msg, o.dir, &err);
            } else if (tag == APP_MPI_DONE) {
                ranks_done++;
                if (src >= 0 && src < (int)sizeof rank_done)
                    rank_done[src] = 1;
                int st = atoi(msg);
                if (st != SIM_OK && !remote_failed) {
                    remote_failed = 1;
                    remote_rc = st;
                    const char *text = strchr(msg, ' ');
                    sim_err_set(&remote_err, st, "rank %d: %s", src, text ? text + 1 : "failed");
                }
            }
        }
        app_progress_update(&prog, c.written);
        if (c.rank == 0 && c.nranks > 1 && app_signal_pending() && !reported &&
            ranks_done < c.nranks - 1) {
            report_unfinished(&c, rank_done);
            reported = 1;
        }
        if (live == 0 && !c.head) {
            if (c.rank > 0)
                break;
            if (ranks_done == c.nranks - 1)
                break;
        }
    }
    free(msg);
    for (int w = 0; w < nworkers; w++)
        pthread_join(workers[w].thread, NULL);
#ifdef HORIZON_HAVE_CUDA
    if (is_cuda)
        gpu_alloc_pool(0);
#endif
    drain_rows(&c, o.dir, &err);
    app_progress_end(&prog, c.written);
    int sig = app_signal_pending();
    signalled = sig != 0;

    if (c.rank > 0) {
        /* Tell rank 0 how this rank ended: "STATUS message". */
        char done_msg[sizeof err.msg + 16];
        int st = c.failed ? (c.fail_rc ? c.fail_rc : SIM_EIO) : SIM_OK;
        snprintf(done_msg, sizeof done_msg, "%d %s", st, c.failed ? c.fail_err.msg : "");
        app_mpi_send(APP_MPI_DONE, done_msg);
        exit_code = c.failed ? app_exit_code(st) : sig == SIGINT ? APP_EXIT_SIGINT
                                                     : sig ? APP_EXIT_SIGTERM : APP_EXIT_OK;
        goto done;
    }
    double wall = app_now() - t0;
    int complete = c.written == c.todo;
    if (complete && write_rc == SIM_OK) {
        close(c.csv_fd);
        c.csv_fd = -1;
        write_rc = sort_rows(o.dir, &err);
    }
    int jrc = write_sweep_json(&c, &o, spec, wall, complete, &err);
    if (write_rc != SIM_OK || jrc != SIM_OK) {
        rc = write_rc != SIM_OK ? write_rc : jrc;
        goto fail;
    }
    if (c.failed || remote_failed) {
        sim_err *e = c.failed ? &c.fail_err : &remote_err;
        rc = c.failed ? c.fail_rc : remote_rc;
        fprintf(stderr, "horizon: %s\n", e->msg);
        fprintf(stderr, "horizon: sweep stopped: %" PRId64 " of %" PRId64 " runs recorded in "
                "%s/sweep.csv; the same command goes on with the rest\n", recorded + c.written,
                c.runs, o.dir);
        exit_code = app_exit_code(rc);
        goto done;
    }
    if (signalled) {
        fprintf(stderr, "horizon: %s: the runs in flight were finished; %" PRId64 " of %" PRId64
                " runs recorded in %s/sweep.csv; the same command goes on with the rest\n",
                sig == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)",
                recorded + c.written, c.runs, o.dir);
        exit_code = sig == SIGINT ? APP_EXIT_SIGINT : APP_EXIT_SIGTERM;
        goto done;
    }
    if (!o.quiet)
        printf("done: %" PRId64 " runs in %.2f s (%.1f runs/s)%s\noutput: %s/sweep.csv, "
               "%s/sweep.json\n", c.written, wall, wall > 0 ? (double)c.written / wall : 0.0,
               recorded ? " (the others were recorded earlier)" : "", o.dir, o.dir);
    goto done;

fail:
    if (c.rank == 0)
        fprintf(stderr, "horizon: %s\n", err.msg);
fail_quiet:
    exit_code = app_exit_code(rc);
done:
    if (signals_on) {
        app_signals_restore(&old_signals);
        pthread_cond_destroy(&c.cv);
        pthread_mutex_destroy(&c.mu);
    }
    free(workers);
    if (c.csv_fd >= 0)
        close(c.csv_fd);
    sim_outdir_unlock(lock_fd);
    free(spec);
    free(c.done);
    sim_sweep_destroy(sw);
    free(o.sets);
    app_mpi_stop();
    return exit_code;
}
