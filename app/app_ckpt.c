/* app_ckpt.c - checkpoints on a writer thread (app_ckpt.h). */
#include "app_ckpt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct app_ckpt {
    const sim_checkpoint *ck; /* the job: set while one is queued or being written */
    char path[SIM_PATH_MAX + 32];
    int64_t step;
    int64_t written;          /* step of the newest checkpoint written, -1: none since a wait */
    int quit;
    int rc;                   /* the last write's failure, not reported yet */
    sim_err err;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static void *writer(void *arg)
{
    app_ckpt *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->ck && !w->quit)
            pthread_cond_wait(&w->cv, &w->mu);
        if (!w->ck)
            break;
        const sim_checkpoint *ck = w->ck;
        pthread_mutex_unlock(&w->mu);
        sim_err err;
        int rc = sim_checkpoint_write(ck, w->path, &err); /* path and step: fixed while ck set */
        pthread_mutex_lock(&w->mu);
        if (rc != SIM_OK) {
            w->rc = rc;
            w->err = err;
        } else {
            w->written = w->step;
        }
        w->ck = NULL;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int app_ckpt_create(app_ckpt **out, sim_err *err)
{
    *out = NULL;
    app_ckpt *w = calloc(1, sizeof *w);
    if (!w)
        return sim_err_set(err, SIM_ENOMEM, "out of memory for the checkpoint writer");
    w->written = -1;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->thread, NULL, writer, w) != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return sim_err_set(err, SIM_EIO, "cannot start the checkpoint writer");
    }
    *out = w;
    return SIM_OK;
}

/* The last write's outcome, reported once (lock held). */
static int take_result(app_ckpt *w, int64_t *on_disk, sim_err *err)
{
    int rc = w->rc;
    if (rc != SIM_OK)
        *err = w->err;
    w->rc = SIM_OK;
    if (w->written >= 0)
        *on_disk = w->written;
    w->written = -1;
    return rc;
}

int app_ckpt_wait(app_ckpt *w, int64_t *on_disk, sim_err *err)
{
    pthread_mutex_lock(&w->mu);
    while (w->ck)
        pthread_cond_wait(&w->cv, &w->mu);
    int rc = take_result(w, on_disk, err);
    pthread_mutex_unlock(&w->mu);
    return rc;
}

int app_ckpt_poll(app_ckpt *w, int64_t *on_disk, sim_err *err)
{
    pthread_mutex_lock(&w->mu);
    int rc = w->ck ? SIM_OK : take_result(w, on_disk, err);
    pthread_mutex_unlock(&w->mu);
    return rc;
}

void app_ckpt_submit(app_ckpt *w, const sim_checkpoint *ck, const char *path, int64_t step)
{
    pthread_mutex_lock(&w->mu);
    snprintf(w->path, sizeof w->path, "%s", path);
    w->step = step;
    w->ck = ck;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void app_ckpt_destroy(app_ckpt *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL); /* the writer finishes the checkpoint in flight first */
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
