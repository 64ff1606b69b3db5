/* app_writer.c - the write-job thread (app_writer.h). */
#include "app_writer.h"

#include <pthread.h>
#include <stdlib.h>

struct app_writer {
    app_write_job job;
    void *ctx;
    int slots;
    int busy[APP_WRITER_SLOTS_MAX]; /* slot i is acquired, queued or running */
    int q[APP_WRITER_SLOTS_MAX];    /* queued slots, in order */
    int head, n;                    /* n: queued or running */
    int quit;
    int rc;                         /* the first failure not reported yet */
    sim_err err;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static void *run(void *arg)
{
    app_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->n == 0 && !w->quit)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->n == 0)
            break;
        const int slot = w->q[w->head];
        pthread_mutex_unlock(&w->mu);
        sim_err err;
        int rc = w->job(w->ctx, slot, &err);
        pthread_mutex_lock(&w->mu);
        if (rc != SIM_OK && w->rc == SIM_OK) {
            w->rc = rc;
            w->err = err;
        }
        w->busy[slot] = 0;
        w->head = (w->head + 1) % w->slots;
        w->n--;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int app_writer_create(int slots, app_write_job job, void *ctx, const char *what,
                      app_writer **out, sim_err *err)
{
    *out = NULL;
    app_writer *w = calloc(1, sizeof *w);
    if (!w)
        return sim_err_set(err, SIM_ENOMEM, "out of memory for the %s", what);
    w->job = job;
    w->ctx = ctx;
    w->slots = slots < 1 ? 1 : slots > APP_WRITER_SLOTS_MAX ? APP_WRITER_SLOTS_MAX : slots;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->thread, NULL, run, w) != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return sim_err_set(err, SIM_EIO, "cannot start the %s", what);
    }
    *out = w;
    return SIM_OK;
}

/* The failure since the last report, reported once (lock held). */
static int take_failure(app_writer *w, sim_err *err)
{
    int rc = w->rc;
    if (rc != SIM_OK)
        *err = w->err;
    w->rc = SIM_OK;
    return rc;
}

int app_writer_acquire(app_writer *w, int *slot, sim_err *err)
{
    pthread_mutex_lock(&w->mu);
    int i = 0;
    for (;;) {
        for (i = 0; i < w->slots && w->busy[i]; i++)
            ;
        if (i < w->slots)
            break;
        pthread_cond_wait(&w->cv, &w->mu);
    }
    int rc = take_failure(w, err);
    if (rc == SIM_OK)
        w->busy[i] = 1;
    pthread_mutex_unlock(&w->mu);
    *slot = i;
    return rc;
}

void app_writer_queue(app_writer *w, int slot)
{
    pthread_mutex_lock(&w->mu);
    w->q[(w->head + w->n) % w->slots] = slot;
    w->n++;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void app_writer_cancel(app_writer *w, int slot)
{
    pthread_mutex_lock(&w->mu);
    w->busy[slot] = 0;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

int app_writer_poll(app_writer *w, int *idle, sim_err *err)
{
    pthread_mutex_lock(&w->mu);
    int rc = take_failure(w, err);
    if (idle)
        *idle = w->n == 0;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

int app_writer_drain(app_writer *w, sim_err *err)
{
    pthread_mutex_lock(&w->mu);
    while (w->n > 0)
        pthread_cond_wait(&w->cv, &w->mu);
    int rc = take_failure(w, err);
    pthread_mutex_unlock(&w->mu);
    return rc;
}

void app_writer_destroy(app_writer *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL); /* the thread runs the queued jobs first */
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
