/* app_rows.c - stats.csv rows on a writer thread (app_rows.h). */
#include "app_rows.h"

#include <stdlib.h>

#include "app_output.h"
#include "app_writer.h"

struct app_rows {
    FILE *f;
    const char *path;
    sim_stats *rows[2]; /* slot i's rows, SIM_STEP_BATCH_MAX each */
    int n[2];
    app_writer *w;
};

static int write_rows(void *ctx, int slot, sim_err *err)
{
    app_rows *r = ctx;
    return app_stats_rows(r->f, r->rows[slot], r->n[slot], NULL, r->path, err);
}

/* Frees the row buffers and r (NULL is a no-op); the writer is gone or was never made. */
static void rows_free(app_rows *r)
{
    if (!r)
        return;
    free(r->rows[0]);
    free(r->rows[1]);
    free(r);
}

int app_rows_create(FILE *f, const char *path, app_rows **out, sim_err *err)
{
    *out = NULL;
    app_rows *r = calloc(1, sizeof *r);
    if (!r || !(r->rows[0] = malloc(SIM_STEP_BATCH_MAX * sizeof(sim_stats))) ||
        !(r->rows[1] = malloc(SIM_STEP_BATCH_MAX * sizeof(sim_stats)))) {
        rows_free(r);
        return sim_err_set(err, SIM_ENOMEM, "out of memory for the stats writer");
    }
    r->f = f;
    r->path = path;
    int rc = app_writer_create(2, write_rows, r, "stats writer", &r->w, err);
    if (rc != SIM_OK) {
        rows_free(r);
        return rc;
    }
    *out = r;
    return SIM_OK;
}

int app_rows_submit(app_rows *r, const sim_stats *st, int n, const uint8_t *keep, sim_err *err)
{
    int slot;
    int rc = app_writer_acquire(r->w, &slot, err);
    if (rc != SIM_OK)
        return rc;
    int k = 0;
    for (int i = 0; i < n && i < SIM_STEP_BATCH_MAX; i++)
        if (!keep || keep[i])
            r->rows[slot][k++] = st[i];
    if (k == 0) {
        app_writer_cancel(r->w, slot);
        return SIM_OK;
    }
    r->n[slot] = k;
    app_writer_queue(r->w, slot);
    return SIM_OK;
}

int app_rows_drain(app_rows *r, sim_err *err)
{
    return app_writer_drain(r->w, err);
}

void app_rows_destroy(app_rows *r)
{
    if (!r)
        return;
    app_writer_destroy(r->w); /* the writer writes the queued rows first */
    rows_free(r);
}
