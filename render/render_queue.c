/* render_queue.c - frame writer threads: a fixed pool of buffers cycles between the caller (who
 * fills one), a FIFO of pending frames and the workers (who encode and give it back).
 *
 * One mutex guards all state; three condition variables say "a buffer is free" (acquire waits),
 * "a frame is pending" (workers wait) and "nothing pending or in flight" (finish waits). Slots
 * are named by index; the FIFO is a ring of indices, the free list a stack of indices.
 *
 * Frames are encoded in parallel but appear under their final names in the order they were
 * submitted: a worker writes NAME.tmp, and the renames happen from a second ring (every frame
 * submitted and not yet renamed, in submission order) as soon as its head is encoded. A run
 * killed at any moment therefore leaves frames 0..k under final names and never k+1 without k.
 * After a failed frame no later frame is renamed (their .tmp files are removed). */
#include "render_queue.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render_png.h"

#define MAX_WORKERS 64
#define MAX_SLOTS 1024

struct render_queue {
    pthread_mutex_t mu;
    pthread_cond_t freed;   /* nfree went up */
    pthread_cond_t pending; /* npending went up, or stop was set */
    pthread_cond_t idle;    /* npending == 0 && busy == 0 */

    int w, h;
    int slots;
    uint8_t *pixels;   /* slots * w*h*4 bytes, one allocation */
    size_t frame_bytes;
    char *paths;       /* slots * RENDER_QUEUE_PATH_MAX */
    int *free_stack;   /* slots entries, nfree used */
    int nfree;
    int *ring;         /* pending slot indices, oldest at head */
    int head, npending;
    int *order;        /* submitted, not yet renamed slot indices, in submission order */
    int ohead, norder;
    signed char *done; /* per slot: 0 encoding or pending, 1 encoded, -1 failed or dropped */
    int broken;        /* a frame failed: later frames are not renamed */
    int busy;          /* frames being encoded right now */
    int stop;

    int status;        /* first error, SIM_OK while none */
    sim_err err;

    pthread_t *threads;
    int nthreads;      /* started and not yet joined */
};

/* Records the first error only; the caller holds the mutex. */
static void note_error(render_queue *q, int rc, const sim_err *e)
{
    if (q->status == SIM_OK) {
        q->status = rc;
        q->err = *e;
    }
}

/* Gives slot i back to the free list; the caller holds the mutex. */
static void release_slot(render_queue *q, int i)
{
    q->free_stack[q->nfree++] = i;
    pthread_cond_signal(&q->freed);
    if (q->npending == 0 && q->busy == 0 && q->norder == 0)
        pthread_cond_broadcast(&q->idle);
}

/* Slot i is encoded (ok) or failed: renames every frame at the head of the submission order
 * whose encoding is over, oldest first, and frees their slots. The caller holds the mutex; the
 * renames are quick metadata operations, and holding it keeps them in order. */
static void finish_slot(render_queue *q, int i, int ok)
{
    q->done[i] = ok ? 1 : -1;
    while (q->norder > 0 && q->done[q->order[q->ohead]] != 0) {
        int j = q->order[q->ohead];
        q->ohead = (q->ohead + 1) % q->slots;
        q->norder--;
        const char *path = q->paths + (size_t)j * RENDER_QUEUE_PATH_MAX;
        if (q->done[j] > 0 && !q->broken) {
            sim_err e;
            int rc = render_png_commit(path, &e);
            if (rc != SIM_OK) {
                note_error(q, rc, &e);
                q->broken = 1;
            }
        } else {
            char tmp[RENDER_QUEUE_PATH_MAX + 8];
            snprintf(tmp, sizeof tmp, "%s.tmp", path);
            if (q->done[j] > 0)
                remove(tmp); /* encoded after an earlier frame failed: would leave a gap */
            q->broken = 1;
        }
        q->done[j] = 0;
        release_slot(q, j);
    }
}

static void *worker_main(void *arg)
{
    render_queue *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (q->npending == 0 && !q->stop)
            pthread_cond_wait(&q->pending, &q->mu);
        if (q->npending == 0)
            break; /* stop, and nothing left to write */
        int i = q->ring[q->head];
        q->head = (q->head + 1) % q->slots;
        q->npending--;
        /* After an error the pending frames are dropped: the run is stopping anyway. */
        if (q->status != SIM_OK) {
            finish_slot(q, i, 0);
            continue;
        }
        q->busy++;
        pthread_mutex_unlock(&q->mu);

        sim_err e;
        e.msg[0] = '\0';
        int rc = render_png_write_tmp(q->paths + (size_t)i * RENDER_QUEUE_PATH_MAX,
                                      q->pixels + (size_t)i * q->frame_bytes, q->w, q->h, &e);

        pthread_mutex_lock(&q->mu);
        if (rc != SIM_OK)
            note_error(q, rc, &e);
        q->busy--;
        finish_slot(q, i, rc == SIM_OK);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* Stops and joins the started workers and frees everything (create's error path, destroy). */
static void teardown(render_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->stop = 1;
    pthread_cond_broadcast(&q->pending);
    pthread_mutex_unlock(&q->mu);
    for (int t = 0; t < q->nthreads; t++)
        pthread_join(q->threads[t], NULL);
    pthread_cond_destroy(&q->idle);
    pthread_cond_destroy(&q->pending);
    pthread_cond_destroy(&q->freed);
    pthread_mutex_destroy(&q->mu);
    free(q->threads);
    free(q->done);
    free(q->order);
    free(q->ring);
    free(q->free_stack);
    free(q->paths);
    free(q->pixels);
    free(q);
}

int render_queue_create(int workers, int slots, int w, int h, render_queue **out, sim_err *err)
{
    *out = NULL;
    if (workers < 1 || workers > MAX_WORKERS || slots < 1 || slots > MAX_SLOTS)
        return sim_err_set(err, SIM_EINVAL,
                           "frame queue: %d workers, %d slots (allowed 1..%d, 1..%d)", workers,
                           slots, MAX_WORKERS, MAX_SLOTS);
    if (w <= 0 || h <= 0)
        return sim_err_set(err, SIM_EINVAL, "frame queue: frame size %dx%d must be positive",
                           w, h);
    size_t frame = (size_t)w * (size_t)h * 4; /* w, h < 2^31: fits 64-bit size_t */
    if (frame / 4 / (size_t)h != (size_t)w || frame > SIZE_MAX / (size_t)slots)
        return sim_err_set(err, SIM_EINVAL, "frame queue: frame size %dx%d too large", w, h);

    render_queue *q = calloc(1, sizeof(*q));
    if (!q)
        return sim_err_set(err, SIM_ENOMEM, "frame queue: out of memory");
    /* The primitives first, so that teardown can always destroy them. */
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->freed, NULL);
    pthread_cond_init(&q->pending, NULL);
    pthread_cond_init(&q->idle, NULL);
    q->w = w;
    q->h = h;
    q->slots = slots;
    q->frame_bytes = frame;
    q->pixels = malloc(frame * (size_t)slots);
    q->paths = calloc((size_t)slots, RENDER_QUEUE_PATH_MAX);
    q->free_stack = malloc(sizeof(int) * (size_t)slots);
    q->ring = malloc(sizeof(int) * (size_t)slots);
    q->order = malloc(sizeof(int) * (size_t)slots);
    q->done = calloc((size_t)slots, 1);
    q->threads = malloc(sizeof(pthread_t) * (size_t)workers);
    if (!q->pixels || !q->paths || !q->free_stack || !q->ring || !q->order || !q->done ||
        !q->threads) {
        teardown(q);
        return sim_err_set(err, SIM_ENOMEM,
                           "frame queue: out of memory for %d frames of %dx%d", slots, w, h);
    }
    /* Hand out low slots first: purely cosmetic, the order does not matter. */
    for (int i = 0; i < slots; i++)
        q->free_stack[i] = slots - 1 - i;
    q->nfree = slots;

    for (int t = 0; t < workers; t++) {
        if (pthread_create(&q->threads[t], NULL, worker_main, q) != 0) {
            teardown(q);
            return sim_err_set(err, SIM_EIO, "frame queue: cannot start writer thread %d", t);
        }
        q->nthreads++;
    }
    *out = q;
    return SIM_OK;
}

uint8_t *render_queue_acquire(render_queue *q)
{
    pthread_mutex_lock(&q->mu);
    while (q->nfree == 0)
        pthread_cond_wait(&q->freed, &q->mu);
    int i = q->free_stack[--q->nfree];
    pthread_mutex_unlock(&q->mu);
    return q->pixels + (size_t)i * q->frame_bytes;
}

void render_queue_submit(render_queue *q, uint8_t *buf, const char *path)
{
    size_t len = path ? strlen(path) : 0;
    /* A pointer that is not one of our buffers would corrupt the free list: refuse it. */
    uintptr_t base = (uintptr_t)q->pixels, p = (uintptr_t)buf;
    size_t off = (size_t)(p - base);
    if (p < base || off % q->frame_bytes != 0 || off / q->frame_bytes >= (size_t)q->slots) {
        sim_err e;
        sim_err_set(&e, SIM_EINVAL, "frame queue: submitted buffer for %.200s was not acquired"
                    " from this queue", path ? path : "(none)");
        pthread_mutex_lock(&q->mu);
        note_error(q, SIM_EINVAL, &e);
        pthread_mutex_unlock(&q->mu);
        return;
    }
    int i = (int)(off / q->frame_bytes);

    pthread_mutex_lock(&q->mu);
    if (!path) { /* nothing to write: the caller hands the buffer back unused */
        release_slot(q, i);
        pthread_mutex_unlock(&q->mu);
        return;
    }
    if (len >= RENDER_QUEUE_PATH_MAX) {
        sim_err e;
        sim_err_set(&e, SIM_EINVAL, "%.200s...: output path longer than %d bytes", path,
                    RENDER_QUEUE_PATH_MAX - 1);
        note_error(q, SIM_EINVAL, &e);
    }
    if (q->status != SIM_OK) {
        release_slot(q, i);
        pthread_mutex_unlock(&q->mu);
        return;
    }
    memcpy(q->paths + (size_t)i * RENDER_QUEUE_PATH_MAX, path, len + 1);
    q->ring[(q->head + q->npending) % q->slots] = i;
    q->npending++;
    q->order[(q->ohead + q->norder) % q->slots] = i;
    q->norder++;
    pthread_cond_signal(&q->pending);
    pthread_mutex_unlock(&q->mu);
}

uint8_t *render_queue_pixels(render_queue *q, size_t *bytes)
{
    *bytes = (size_t)q->slots * q->frame_bytes;
    return q->pixels;
}

int render_queue_check(render_queue *q, sim_err *err)
{
    pthread_mutex_lock(&q->mu);
    int rc = q->status;
    if (rc != SIM_OK && err)
        *err = q->err;
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int render_queue_finish(render_queue *q, sim_err *err)
{
    pthread_mutex_lock(&q->mu);
    while (q->npending > 0 || q->busy > 0 || q->norder > 0)
        pthread_cond_wait(&q->idle, &q->mu);
    int rc = q->status;
    if (rc != SIM_OK && err)
        *err = q->err;
    pthread_mutex_unlock(&q->mu);
    return rc;
}

void render_queue_destroy(render_queue *q)
{
    if (!q)
        return;
    /* Workers drain the FIFO before they see stop, so stopping is finishing. */
    teardown(q);
}

