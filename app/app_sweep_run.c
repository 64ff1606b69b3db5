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
#include "sim_model.h"
#include "sim_outdir.h"

/* The statistics columns: the last step's value, then the mean over the window. The first six
 * are every scenario's; a model with named sections adds its species' and fields' groups, as
 * stats.csv does (sim_stats_csv_header), in the same order. */
static const char *const stat_cols[] = {"agents",     "moved",     "field_total",
                                        "field_mean", "field_max", "residual"};
static const char *const species_cols[] = {"count", "moved", "births", "deaths", "energy"};
static const char *const field_cols[] = {"total", "mean", "max"};
enum {
    NBASE = sizeof stat_cols / sizeof stat_cols[0],
    NSPECIES = sizeof species_cols / sizeof species_cols[0],
    NFIELD = sizeof field_cols / sizeof field_cols[0],
    NSTAT = NBASE + NSPECIES * SIM_MAX_SPECIES + NFIELD * SIM_MAX_FIELDS
};

/* The values of st's columns into v (and whether each is a count, printed as an integer);
 * returns how many. */
static int stat_values(const sim_stats *st, double v[NSTAT], int count[NSTAT])
{
    int k = 0;
    const double base[NBASE] = {(double)st->agents, (double)st->moved,    st->field_total,
                                st->field_mean,     (double)st->field_max, (double)st->residual};
    for (int c = 0; c < NBASE; c++) {
        count[k] = c < 2;
        v[k++] = base[c];
    }
    for (int s = 0; s < st->n_species; s++) {
        const sim_species_stats *p = &st->species[s];
        const double g[NSPECIES] = {(double)p->count, (double)p->moved, (double)p->births,
                                    (double)p->deaths, p->energy};
        for (int c = 0; c < NSPECIES; c++) {
            count[k] = c < 4;
            v[k++] = g[c];
        }
    }
    for (int f = 0; st->n_species > 0 && f < st->n_fields; f++) {
        const double g[NFIELD] = {st->fields[f].total, st->fields[f].mean,
                                  (double)st->fields[f].max};
        for (int c = 0; c < NFIELD; c++) {
            count[k] = 0;
            v[k++] = g[c];
        }
    }
    return k;
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
    /* The columns of the base's model: a sweep cannot add or remove a named section. */
    char names[NSTAT][2 * SIM_NAME_MAX + 16];
    int ncol = 0;
    for (int c = 0; c < NBASE; c++)
        snprintf(names[ncol++], sizeof names[0], "%s", stat_cols[c]);
    sim_model *m = malloc(sizeof *m);
    if (!m)
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    if (sim_model_build(sim_sweep_base(sw), m, NULL) == SIM_OK && m->named) {
        for (int s = 0; s < m->n_species; s++)
            for (int c = 0; c < NSPECIES; c++)
                snprintf(names[ncol++], sizeof names[0], "%s.%s", m->species_name[s],
                         species_cols[c]);
        for (int f = 0; f < m->n_fields; f++)
            for (int c = 0; c < NFIELD; c++)
                snprintf(names[ncol++], sizeof names[0], "%s.%s", m->field_name[f],
                         field_cols[c]);
    }
    free(m);
    for (int c = 0; rc == SIM_OK && c < ncol; c++)
        rc = put(buf, n, &used, err, ",%s", names[c]);
    for (int c = 0; rc == SIM_OK && c < ncol; c++)
        rc = put(buf, n, &used, err, ",mean_%s", names[c]);
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
    int is_count[NSTAT] = {0}, ncol = 0;
    int64_t in_window = 0;
    sim_stats st;
    memset(&st, 0, sizeof st);
    /* Steps in batches (sim_step_batch: on the GPU, one wait for the device per batch), each
     * ending at a frame or the end, and short enough in time for `stop` to be seen promptly. */
    app_batch bt;
    app_batch_init(&bt, 0.05);
    uint8_t want[SIM_STEP_BATCH_MAX];
    sim_stats out[SIM_STEP_BATCH_MAX];
    uint8_t keep[SIM_STEP_BATCH_MAX]; /* the rows of a batch that stats.csv keeps */
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
        for (int i = 0; i < len; i++) {
            int64_t k = done + 1 + i;
            if (k >= first_in_window) {
                ncol = stat_values(&out[i], last, is_count);
                for (int c = 0; c < ncol; c++)
                    sum[c] += last[c];
                in_window++;
            }
            keep[i] = (uint8_t)due(k, sc.stats_every);
        }
        if (o.stats)
            rc = app_stats_rows(o.stats, out, len, keep, o.stats_path, err);
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
    /* A run of 0 steps has no statistics: empty fields, as many as the header has. */
    if (!in_window) {
        sim_stats none;
        memset(&none, 0, sizeof none);
        sim_model *m = rc == SIM_OK ? malloc(sizeof *m) : NULL;
        if (m && sim_model_build(&sc, m, NULL) == SIM_OK && m->named) {
            none.n_species = m->n_species;
            none.n_fields = m->n_fields;
        }
        free(m);
        ncol = stat_values(&none, last, is_count);
    }
    for (int c = 0; rc == SIM_OK && c < ncol; c++)
        rc = in_window ? put(row, n, &used, err, is_count[c] ? ",%.0f" : ",%.17g", last[c])
                       : put(row, n, &used, err, ",");
    for (int c = 0; rc == SIM_OK && c < ncol; c++)
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
