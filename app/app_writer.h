/* app_writer.h - a thread that runs a run's write jobs (field dumps, checkpoints, stats rows)
 * in the order they were handed over, so that the step loop waits neither for the disk nor for
 * the formatting. A job is a slot: the caller takes a free slot, fills its own data for that
 * slot (buffers it indexes by slot), queues it, and leaves that data alone until the job has
 * run. The first failure of a job is kept and reported by the next acquire, poll or drain. */
#ifndef APP_WRITER_H
#define APP_WRITER_H

#include "sim_status.h"

#define APP_WRITER_SLOTS_MAX 2

/* Runs slot `slot`'s job on the writer thread; returns SIM_OK or a failure with err set. */
typedef int (*app_write_job)(void *ctx, int slot, sim_err *err);

typedef struct app_writer app_writer;

/* Starts a writer of `slots` (1 .. APP_WRITER_SLOTS_MAX) slots running job(ctx, slot). `what`
 * names it in the one error there can be (SIM_ENOMEM, or SIM_EIO when no thread can be had);
 * *out is NULL then. */
int app_writer_create(int slots, app_write_job job, void *ctx, const char *what,
                      app_writer **out, sim_err *err);

/* Waits for a free slot into *slot. Returns the failure of an earlier job (its message in err;
 * no slot is taken then), else SIM_OK. */
int app_writer_acquire(app_writer *w, int *slot, sim_err *err);

/* Hands the acquired slot to the thread, after the jobs queued before it. */
void app_writer_queue(app_writer *w, int slot);

/* Gives an acquired slot back unqueued (its data could not be filled). */
void app_writer_cancel(app_writer *w, int slot);

/* Without waiting: the failure of a job since the last report, else SIM_OK; *idle (may be NULL)
 * is 1 when no job is queued or running. */
int app_writer_poll(app_writer *w, int *idle, sim_err *err);

/* Waits until every queued job has run; returns the first failure since the last report. */
int app_writer_drain(app_writer *w, sim_err *err);

/* Runs the queued jobs (dropping any failure), stops the thread and frees w; NULL is a no-op. */
void app_writer_destroy(app_writer *w);

#endif
