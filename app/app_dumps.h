/* app_dumps.h - field dumps (.npy) written on a thread of their own, so that the steps wait
 * neither for the disk nor for the copy: the field's copy into one of two host buffers is begun
 * (sim_read_field_begin: on the GPU a device-side snapshot, then a copy to the host beside the
 * next steps), and the writer thread waits for it and writes it atomically (app_write_npy: .tmp,
 * fsync, rename). A third dump waits only while both buffers are still being written. */
#ifndef APP_DUMPS_H
#define APP_DUMPS_H

#include "sim.h"

typedef struct app_dumps app_dumps;

/* Allocates two width*height float buffers, pinned for backend ops where it can (sim_pin_host:
 * the CUDA backend's reads then copy at the link's speed), and starts the writer. SIM_ENOMEM
 * (or SIM_EIO when no thread can be had) with *out NULL on failure. */
int app_dumps_create(int width, int height, const sim_backend_ops *ops, app_dumps **out,
                     sim_err *err);

/* Begins reading the current field of s into a free buffer (waiting for one) and queues it to be
 * written as DIR/fields/field_STEP.npy. Returns the failure of an earlier write, if one failed
 * (its message in err), or the read's; SIM_OK when the dump is queued. s must outlive the
 * queued dumps (drain or destroy first). */
int app_dumps_submit(app_dumps *d, sim *s, const char *dir, sim_err *err);

/* Waits until every queued dump is on disk; returns the first failure since the last call. A
 * checkpoint drains first, so that a checkpoint on disk implies the dumps before it are. */
int app_dumps_drain(app_dumps *d, sim_err *err);

/* Drains (dropping any failure) and frees everything; NULL is a no-op. */
void app_dumps_destroy(app_dumps *d);

#endif
