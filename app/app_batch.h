/* app_batch.h - how many steps a run hands to sim_step_batch at once. A batch ends where the
 * host needs the state (the caller's rule: a frame, a dump, a checkpoint, an event, the end);
 * below that, this keeps batches short enough in time that Ctrl-C, a sweep's stop and the
 * progress line stay responsive: from 1 step it doubles while the measured steps are fast, and
 * falls back to what fits the time bound when they are slow. */
#ifndef APP_BATCH_H
#define APP_BATCH_H

#include <stdint.h>

typedef struct app_batch {
    int cap;         /* steps the next batch may have: 1 .. SIM_STEP_BATCH_MAX */
    double bound_s;  /* seconds a batch should take at most */
} app_batch;

/* Starts at 1 step, with a bound of bound_s seconds a batch (e.g. 0.05). */
void app_batch_init(app_batch *b, double bound_s);

/* After a batch of n steps that took `seconds`: the next cap is twice this one while twice as
 * many steps at this batch's rate fit the bound, at most SIM_STEP_BATCH_MAX; or as many steps
 * as fit the bound (at least 1) when this batch's rate does not fit the current cap. */
void app_batch_took(app_batch *b, int n, double seconds);

/* The first multiple of `every` after `done` (INT64_MAX when every <= 0): the next step at which
 * something due every `every` steps falls. */
int64_t app_batch_next_due(int64_t done, int64_t every);

#endif
