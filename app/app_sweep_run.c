/* app_sweep_run.c - one run of a sweep, from its scenario to its sweep.csv row. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_batch.h"
#include "app_frames.h"
#include "app_output.h"
#include "app_sweep.h"
#include "sim_outdir.h"

/* The statistics columns: the last step's value, then the mean over the window. */
static const char *const stat_cols[] = {"agents",     "moved",     "field_total",
                                        "field_mean", "field_max", "residual"};
enum { NSTAT = sizeof stat_cols / sizeof stat_cols[0] };

static void stat_values(const sim_stats *st, double v[NSTAT])
{
    v[0] = (double)st->agents;
    v[1] = (double)st->moved;
    v[2] = st->field_total;
    v[3] = st->field_mean;
    v[4] = (double)st->field_max;
    v[5] = (double)st->residual;
}

/* Appends to buf[*used..n): SIM_EINVAL when the row does not fit. */
static int put(char *buf, size_t n, size_t *used, sim_err *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int put(char *buf, size_t n, size_t *used, sim_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *used, n - *used, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= n - *used)
        return sim_err_set(err, SIM_EINVAL, "sweep.csv row longer than %zu bytes", n);
    *used += (size_t)k;
    return SIM_OK;
}

/* A swept value as a CSV field: quoted when it holds a comma, a quote or a blank. */
static int put_value(char *buf, size_t n, size_t *used, const char *v, sim_err *err)
{
    if (strpbrk(v, ",\" \t\n") == NULL)
        return put(buf, n, used, err, ",%s", v);
    int rc = put(buf, n, used, err, ",\"");
    for (const char *p = v; rc == SIM_OK && *p; p++)
        rc = *p == '"' ? put(buf, n, used, err, "\"\"") : put(buf, n, used, err, "%c", *p);
    return rc == SIM_OK ? put(buf, n, used, err, "\"") : rc;
}

int app_sweep_header(const sim_sweep *sw, char *buf, size_t n, sim_err *err)
{
    size_t used = 0;
    int rc = put(buf, n, &used, err, "run");
    for (int k = 0; rc == SIM_OK && k < sim_sweep_keys(sw); k++)
        rc = put_value(buf, n, &used, sim_sweep_key(sw, k), err);
    if (rc == SIM_OK)
        rc = put(buf, n, &used, err, ",replicate,seed,steps,checksum");
    for (int c = 0; rc == SIM_OK && c < NSTAT; c++)
        rc = put(buf, n, &used, err, ",%s", stat_cols[c]);
    for (int c = 0; rc == SIM_OK && c < NSTAT; c++)
        rc = put(buf, n, &used, err, ",mean_%s", stat_cols[c]);
    return rc == SIM_OK ? put(buf, n, &used, err, "\n") : rc;
}

/* What one run holds, released on every path. */
typedef struct one_run {
    sim *s;
    FILE *stats;
    app_frames fr;
    char dir[SIM_PATH_MAX + 32];
    char stats_path[SIM_PATH_MAX + 48];
} one_run;

static void one_release(one_run *o)
{
    if (o->stats)
        fclose(o->stats);
    app_frames_release(&o->fr);
    sim_destroy(o->s);
}

/* Opens the per-run outputs asked for: DIR/runs/run_NNNNNN/ with stats.csv and frames/. */
static int one_outputs(one_run *o, const sim_scenario *sc, const app_sweep_plan *plan,
                       int64_t run, sim_err *err)
{
    int frames = plan->keep_frames && sc->frames_every > 0;
    int stats = plan->keep_stats && sc->stats_every > 0;
    if (!frames && !stats)
        return SIM_OK;
    snprintf(o->dir, sizeof o->dir, "%s/runs/run_%06" PRId64, plan->dir, run);
    int rc = sim_outdir_make(o->dir, NULL, err);
    if (rc == SIM_OK && stats) {
        snprintf(o->stats_path, sizeof o->stats_path, "%s/stats.csv", o->dir);
        rc = app_stats_open(o->dir, sc, &o->stats, err);
    }
    if (rc == SIM_OK && frames) {
        char sub[SIM_PATH_MAX + 48];
        snprintf(sub, sizeof sub, "%s/frames", o->dir);
        rc = sim_outdir_make(sub, NULL, err);
        if (rc == SIM_OK)
            rc = app_frames_init(&o->fr, sc, 2, err);
        if (rc == SIM_OK)
            rc = app_frames_emit(&o->fr, o->s, o->dir, err); /* frame 0: the initial state */
    }
    return rc;
}

static int due(int64_t step, int64_t every)
{
    return every > 0 && step % every == 0;
}

int app_sweep_run(const sim_sweep *sw, int64_t run, const app_sweep_plan *plan,
                  int (*stop)(void), char *row, size_t n, sim_err *err)
{
    sim_scenario sc;
    one_run o;
    memset(&sc, 0, sizeof sc);
    memset(&o, 0, sizeof o);
    int rc = sim_sweep_scenario(sw, run, &sc, err);
    if (rc == SIM_OK)
        rc = sim_create(&sc, plan->ops, plan->threads, &o.s, err);
    if (rc == SIM_OK)
        rc = one_outputs(&o, &sc, plan, run, err);

    /* Statistics every step of the window (the last `window` steps), and where the per-run
     * stats.csv wants them; the sums run in step order, so the means are the same bits on any
     * backend, job count or rank. */
    int64_t first_in_window = sc.steps - plan->window + 1;
    double sum[NSTAT] = {0}, last[NSTAT] = {0};
    int64_t in_window = 0;
    sim_stats st;
    memset(&st, 0, sizeof st);
    /* Steps in batches (sim_step_batch: on the GPU, one wait for the device per batch), each
     * ending at a frame or the end, and short enough in time for `stop` to be seen promptly. */
    app_batch bt;
    app_batch_init(&bt, 0.05);
    uint8_t want[SIM_STEP_BATCH_MAX];
    sim_stats out[SIM_STEP_BATCH_MAX];
    for (int64_t done = 0; rc == SIM_OK && done < sc.steps;) {
        if (stop && stop()) {
            rc = APP_SWEEP_STOPPED;
            break;
        }
        int64_t end = done + bt.cap;
        if (end > sc.steps)
            end = sc.steps;
        if (o.fr.queue && app_batch_next_due(done, sc.frames_every) < end)
            end = app_batch_next_due(done, sc.frames_every);
        const int len = (int)(end - done);
        for (int i = 0; i < len; i++) {
            int64_t k = done + 1 + i;
            want[i] = (uint8_t)((o.stats && due(k, sc.stats_every)) || k >= first_in_window);
        }
        double t0 = app_now();
        if ((rc = sim_step_batch(o.s, len, want, out)) != SIM_OK) {
            sim_err_set(err, rc, "steps %" PRId64 " .. %" PRId64 ": %s", done + 1, end,
                        sim_errmsg(o.s));
            break;
        }
        app_batch_took(&bt, len, app_now() - t0);
        for (int i = 0; rc == SIM_OK && i < len; i++) {
            int64_t k = done + 1 + i;
            if (k >= first_in_window) {
                stat_values(&out[i], last);
                for (int c = 0; c < NSTAT; c++)
                    sum[c] += last[c];
                in_window++;
            }
            if (o.stats && due(k, sc.stats_every))
                rc = app_stats_row(o.stats, &out[i], o.stats_path, err);
        }
        st = out[len - 1];
        done = end;
        if (rc == SIM_OK && o.fr.queue && due(done, sc.frames_every))
            rc = app_frames_emit(&o.fr, o.s, o.dir, err);
    }
    uint64_t checksum = st.checksum;
    if (rc == SIM_OK && sc.steps == 0 && (rc = sim_checksum(o.s, &checksum)) != SIM_OK)
        sim_err_set(err, rc, "%s", sim_errmsg(o.s));
    if (rc == SIM_OK && o.fr.queue)
        rc = render_queue_finish(o.fr.queue, err);
    if (rc == SIM_OK && o.stats && fclose(o.stats) != 0)
        rc = sim_err_set(err, SIM_EIO, "%s: write failed: %s", o.stats_path, strerror(errno));
    o.stats = NULL;

    size_t used = 0;
    if (rc == SIM_OK)
        rc = put(row, n, &used, err, "%" PRId64, run);
    for (int k = 0; rc == SIM_OK && k < sim_sweep_keys(sw); k++)
        rc = put_value(row, n, &used, sim_sweep_value(sw, run, k), err);
    if (rc == SIM_OK)
        rc = put(row, n, &used, err, ",%d,%" PRIu64 ",%" PRId64 ",%016" PRIx64,
                 sim_sweep_replicate(sw, run), sim_sweep_seed(sw, run), sc.steps, checksum);
    /* A run of 0 steps has no statistics: empty fields. */
    for (int c = 0; rc == SIM_OK && c < NSTAT; c++)
        rc = in_window ? put(row, n, &used, err, c == 0 || c == 1 ? ",%.0f" : ",%.17g", last[c])
                       : put(row, n, &used, err, ",");
    for (int c = 0; rc == SIM_OK && c < NSTAT; c++)
        rc = in_window ? put(row, n, &used, err, ",%.17g", sum[c] / (double)in_window)
                       : put(row, n, &used, err, ",");
    if (rc == SIM_OK)
        rc = put(row, n, &used, err, "\n");
    one_release(&o);
    if (rc != SIM_OK && rc != APP_SWEEP_STOPPED) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        sim_err_set(err, rc, "run %" PRId64 ": %s", run, msg);
    }
    return rc;
}
