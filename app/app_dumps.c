/* app_dumps.c - field dumps on a writer thread (app_dumps.h). */
#include "app_dumps.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_output.h"

typedef struct job {
    float *buf;
    char path[SIM_PATH_MAX + 64];
} job;

struct app_dumps {
    int width, height;
    float *buf[2];
    const sim_backend_ops *ops;
    int pinned[2];     /* buf[i] is pinned (sim_pin_host) */
    int busy[2];       /* buffer i is queued or being written */
    job q[2];          /* queued jobs, in order */
    int head, n;
    int quit;
    int rc;            /* the first write failure not reported yet */
    sim_err err;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static void *writer(void *arg)
{
    app_dumps *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (d->n == 0 && !d->quit)
            pthread_cond_wait(&d->cv, &d->mu);
        if (d->n == 0)
            break;
        job j = d->q[d->head];
        pthread_mutex_unlock(&d->mu);
        sim_err err;
        int rc = app_write_npy(j.path, j.buf, d->width, d->height, &err);
        pthread_mutex_lock(&d->mu);
        if (rc != SIM_OK && d->rc == SIM_OK) {
            d->rc = rc;
            d->err = err;
        }
        d->busy[j.buf == d->buf[1]] = 0;
        d->head = (d->head + 1) % 2;
        d->n--;
        pthread_cond_broadcast(&d->cv);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
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
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    if (pthread_create(&d->thread, NULL, writer, d) != 0) {
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        release_buffers(d);
        return sim_err_set(err, SIM_EIO, "cannot start the field dump writer");
    }
    *out = d;
    return SIM_OK;
}

/* The failure of a write since the last report (lock held). */
static int take_failure(app_dumps *d, sim_err *err)
{
    int rc = d->rc;
    if (rc != SIM_OK) {
        *err = d->err;
        d->rc = SIM_OK;
    }
    return rc;
}

int app_dumps_submit(app_dumps *d, sim *s, const char *dir, sim_err *err)
{
    pthread_mutex_lock(&d->mu);
    while (d->busy[0] && d->busy[1])
        pthread_cond_wait(&d->cv, &d->mu);
    int rc = take_failure(d, err);
    int i = d->busy[0] ? 1 : 0;
    pthread_mutex_unlock(&d->mu);
    if (rc != SIM_OK)
        return rc;
    /* The buffer is free: only this thread fills it. */
    if (sim_read_field(s, d->buf[i]) != SIM_OK)
        return sim_err_set(err, SIM_EDEVICE, "%s", sim_errmsg(s));
    pthread_mutex_lock(&d->mu);
    job *j = &d->q[(d->head + d->n) % 2];
    j->buf = d->buf[i];
    snprintf(j->path, sizeof j->path, "%s/fields/field_%06" PRId64 ".npy", dir,
             sim_steps_done(s));
    d->busy[i] = 1;
    d->n++;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    return SIM_OK;
}

int app_dumps_drain(app_dumps *d, sim_err *err)
{
    pthread_mutex_lock(&d->mu);
    while (d->n > 0)
        pthread_cond_wait(&d->cv, &d->mu);
    int rc = take_failure(d, err);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

void app_dumps_destroy(app_dumps *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->mu);
    d->quit = 1;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->thread, NULL); /* the writer finishes the queued dumps first */
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    release_buffers(d);
}
