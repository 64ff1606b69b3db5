/* app_dumps.c - field dumps on a writer thread (app_dumps.h). */
#include "app_dumps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_output.h"
#include "app_writer.h"

struct app_dumps {
    int width, height;
    float *buf[2];                     /* slot i's field */
    char path[2][SIM_PATH_MAX + 64];   /* slot i's file */
    int ticket[2];                     /* slot i's copy into buf[i] (sim_read_field_begin) */
    sim *s;                            /* the simulation the copies come from */
    const sim_backend_ops *ops;
    int pinned[2];                     /* buf[i] is pinned (sim_pin_host) */
    app_writer *w;
};

static int write_dump(void *ctx, int slot, sim_err *err)
{
    app_dumps *d = ctx;
    int rc = sim_read_wait(d->s, d->ticket[slot], err);
    if (rc != SIM_OK)
        return rc;
    return app_write_npy(d->path[slot], d->buf[slot], d->width, d->height, err);
}

/* Unpins and frees both buffers and d. */
static void release_buffers(app_dumps *d)
{
    for (int i = 0; i < 2; i++) {
        if (d->pinned[i])
            sim_unpin_host(d->ops, d->buf[i]);
        free(d->buf[i]);
    }
    free(d);
}

int app_dumps_create(int width, int height, const sim_backend_ops *ops, app_dumps **out,
                     sim_err *err)
{
    *out = NULL;
    app_dumps *d = calloc(1, sizeof *d);
    size_t cells = (size_t)width * (size_t)height;
    if (!d || !(d->buf[0] = malloc(cells * sizeof(float))) ||
        !(d->buf[1] = malloc(cells * sizeof(float)))) {
        if (d) {
            free(d->buf[0]);
            free(d);
        }
        return sim_err_set(err, SIM_ENOMEM, "out of memory for field dumps (2 x %zu MiB)",
                           cells * sizeof(float) >> 20);
    }
    d->width = width;
    d->height = height;
    d->ops = ops;
    for (int i = 0; i < 2; i++)
        d->pinned[i] = sim_pin_host(ops, d->buf[i], cells * sizeof(float));
    int rc = app_writer_create(2, write_dump, d, "field dump writer", &d->w, err);
    if (rc != SIM_OK) {
        release_buffers(d);
        return rc;
    }
    *out = d;
    return SIM_OK;
}

int app_dumps_submit(app_dumps *d, sim *s, const char *dir, sim_err *err)
{
    int i;
    int rc = app_writer_acquire(d->w, &i, err);
    if (rc != SIM_OK)
        return rc;
    /* The slot is free: only this thread fills it. The copy runs beside the next steps; the
     * writer waits for it. */
    d->s = s;
    if (sim_read_field_begin(s, d->buf[i], &d->ticket[i]) != SIM_OK) {
        app_writer_cancel(d->w, i);
        return sim_err_set(err, SIM_EDEVICE, "%s", sim_errmsg(s));
    }
    snprintf(d->path[i], sizeof d->path[i], "%s/fields/field_%06" PRId64 ".npy", dir,
             sim_steps_done(s));
    app_writer_queue(d->w, i);
    return SIM_OK;
}

int app_dumps_drain(app_dumps *d, sim_err *err)
{
    return app_writer_drain(d->w, err);
}

void app_dumps_destroy(app_dumps *d)
{
    if (!d)
        return;
    app_writer_destroy(d->w); /* the writer finishes the queued dumps first */
    release_buffers(d);
}
