/* app_ckpt.h - checkpoints written on a thread of their own, so that the steps wait only for the
 * state's capture (the agents' copy from the device; the field's copy runs beside the next
 * steps, and the writer waits for it), not for the CRC, the write and the fsyncs
 * (sim_checkpoint_write: .tmp, fsync, .prev, rename). One checkpoint is in flight at a time:
 * the next capture waits until the previous one is on disk (its buffers are the writer's until
 * then), and so does every report of the newest checkpoint on disk. */
#ifndef APP_CKPT_H
#define APP_CKPT_H

#include <stdint.h>

#include "sim_checkpoint.h"

typedef struct app_ckpt app_ckpt;

/* Starts the writer. SIM_ENOMEM or SIM_EIO (no thread) with *out NULL on failure. */
int app_ckpt_create(app_ckpt **out, sim_err *err);

/* Waits until the checkpoint in flight (if any) is on disk. Returns its write's failure (the
 * message in err), else SIM_OK; *on_disk: the step of the newest checkpoint this writer put on
 * disk, unchanged when none did since the last call. */
int app_ckpt_wait(app_ckpt *w, int64_t *on_disk, sim_err *err);

/* app_ckpt_wait without the wait: SIM_OK while the checkpoint is still being written. The step
 * loop asks after every batch, so that a failed write stops the run within a batch. */
int app_ckpt_poll(app_ckpt *w, int64_t *on_disk, sim_err *err);

/* Hands ck (captured at step `step` by sim_checkpoint_capture_begin, whose field copy the writer
 * waits for: sim_read_wait(s, field_ticket)) to the writer, to be written to path. The caller
 * waited (app_ckpt_wait) and leaves ck alone until the next wait returns; s outlives the
 * write. */
void app_ckpt_submit(app_ckpt *w, const sim_checkpoint *ck, const char *path, int64_t step,
                     sim *s, int field_ticket);

/* Waits for the checkpoint in flight (dropping any failure) and frees the writer; NULL is a
 * no-op. */
void app_ckpt_destroy(app_ckpt *w);

#endif
