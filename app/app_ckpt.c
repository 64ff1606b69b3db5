/* app_ckpt.c - checkpoints on a writer thread (app_ckpt.h). */
#include "app_ckpt.h"

#include <stdio.h>
#include <stdlib.h>

#include "app_writer.h"

struct app_ckpt {
    const sim_checkpoint *ck; /* the job's state, path and step: fixed while it is queued */
    char path[SIM_PATH_MAX + 32];
    int64_t step;
    sim *s;          /* the job's field copy: complete once sim_read_wait(s, ticket) returns */
    int ticket;
    int64_t written; /* step of the newest checkpoint written, -1: none since the last report */
    app_writer *w;   /* one slot: one checkpoint in flight */
};

static int write_ckpt(void *ctx, int slot, sim_err *err)
{
    (void)slot;
    app_ckpt *c = ctx;
    int rc = sim_read_wait(c->s, c->ticket, err);
    if (rc == SIM_OK)
        rc = sim_checkpoint_write(c->ck, c->path, err);
    if (rc == SIM_OK)
        c->written = c->step; /* read after the writer's lock says the job is done */
    return rc;
}

int app_ckpt_create(app_ckpt **out, sim_err *err)
{
    *out = NULL;
    app_ckpt *c = calloc(1, sizeof *c);
    if (!c)
        return sim_err_set(err, SIM_ENOMEM, "out of memory for the checkpoint writer");
    c->written = -1;
    int rc = app_writer_create(1, write_ckpt, c, "checkpoint writer", &c->w, err);
    if (rc != SIM_OK) {
        free(c);
        return rc;
    }
    *out = c;
    return SIM_OK;
}

/* The newest checkpoint on disk into *on_disk, reported once (the writer is idle). */
static void take_written(app_ckpt *c, int64_t *on_disk)
{
    if (c->written >= 0)
        *on_disk = c->written;
    c->written = -1;
}

int app_ckpt_wait(app_ckpt *c, int64_t *on_disk, sim_err *err)
{
    int rc = app_writer_drain(c->w, err);
    take_written(c, on_disk);
    return rc;
}

int app_ckpt_poll(app_ckpt *c, int64_t *on_disk, sim_err *err)
{
    int idle = 0;
    int rc = app_writer_poll(c->w, &idle, err);
    if (idle)
        take_written(c, on_disk);
    return rc;
}

void app_ckpt_submit(app_ckpt *c, const sim_checkpoint *ck, const char *path, int64_t step,
                     sim *s, int field_ticket)
{
    int slot;
    sim_err ignored; /* the caller waited: the slot is free and no failure is pending */
    app_writer_acquire(c->w, &slot, &ignored);
    snprintf(c->path, sizeof c->path, "%s", path);
    c->step = step;
    c->ck = ck;
    c->s = s;
    c->ticket = field_ticket;
    app_writer_queue(c->w, slot);
}

void app_ckpt_destroy(app_ckpt *c)
{
    if (!c)
        return;
    app_writer_destroy(c->w); /* the writer finishes the checkpoint in flight first */
    free(c);
}
