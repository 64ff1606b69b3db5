/* render_queue.h - a bounded queue of frames that worker threads encode to PNG, so that writing
 * files overlaps the simulation instead of stalling it. */
#ifndef RENDER_QUEUE_H
#define RENDER_QUEUE_H

#include <stdint.h>

#include "sim_status.h"

/* Longest output path a slot holds, including the terminating NUL. */
#define RENDER_QUEUE_PATH_MAX 4096

typedef struct render_queue render_queue;

/* Starts `workers` threads and preallocates `slots` frame buffers of w*h*4 bytes (RGBA); nothing
 * is allocated after this. Returns SIM_OK with *out set, SIM_EINVAL for counts or sizes out of
 * range (workers 1..64, slots 1..1024, w and h > 0), or SIM_ENOMEM/SIM_EIO when memory or a
 * thread cannot be had; on failure *out is NULL and nothing is left behind. */
int render_queue_create(int workers, int slots, int w, int h, render_queue **out, sim_err *err);

/* A free frame buffer (w*h*4 bytes, contents undefined) owned by the caller until it is handed
 * back with render_queue_submit. Blocks while every buffer is queued or being written; never
 * returns NULL. The caller must not hold all slots at once while asking for another. */
uint8_t *render_queue_acquire(render_queue *q);

/* Queues buf (from render_queue_acquire, filled by the caller) to be written to path; the path
 * is copied. Returns at once; a worker encodes path.tmp, and the file is renamed to path only
 * after every frame submitted before it has been: final names appear in submission order, so a
 * killed process leaves no gap. The buffer is freed after the rename. After an error (earlier or in this call, e.g. a path longer than
 * RENDER_QUEUE_PATH_MAX, or a buffer not from this queue) the frame is dropped and the buffer
 * freed; the error is kept for render_queue_check and render_queue_finish. A NULL path hands
 * the buffer back unused (the caller failed to fill it). */
void render_queue_submit(render_queue *q, uint8_t *buf, const char *path);

/* The one allocation that holds every frame buffer, and its size in *bytes (so that a caller can
 * page-lock it once: a GPU then copies frames into it by DMA). */
uint8_t *render_queue_pixels(render_queue *q, size_t *bytes);

/* Non-blocking: SIM_OK, or the first error of any write so far with its message in err, so that
 * a run loop can stop at once when the disk is full. */
int render_queue_check(render_queue *q, sim_err *err);

/* Waits until every submitted frame is written (or dropped after an error). Returns SIM_OK or
 * the first error, with its message in err. The queue stays usable. */
int render_queue_finish(render_queue *q, sim_err *err);

/* Finishes the queued frames, stops and joins the workers and frees everything. Errors are not
 * reported here: call render_queue_finish first to see them. NULL is a no-op. */
void render_queue_destroy(render_queue *q);

#endif
