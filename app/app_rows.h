/* app_rows.h - stats.csv rows formatted and written on a writer thread (app_writer.h), so that
 * a batch's rows are formatted while the next batch steps: a small world's GPU step is shorter
 * than the formatting of its row. Rows go out in step order, whole rows in each write
 * (app_stats_rows). */
#ifndef APP_ROWS_H
#define APP_ROWS_H

#include <stdint.h>
#include <stdio.h>

#include "sim.h"

typedef struct app_rows app_rows;

/* A writer for the open stats file f (path names it in errors); f stays the caller's and must
 * outlive the writer. SIM_ENOMEM or SIM_EIO with *out NULL on failure. */
int app_rows_create(FILE *f, const char *path, app_rows **out, sim_err *err);

/* Copies the rows st[i] (i < n, 1 <= n <= SIM_STEP_BATCH_MAX) whose keep[i] is not 0 (all for
 * keep NULL) and queues them, waiting while two earlier batches are still being written.
 * Returns the failure of an earlier write (its message in err), else SIM_OK. */
int app_rows_submit(app_rows *r, const sim_stats *st, int n, const uint8_t *keep, sim_err *err);

/* Waits until every queued row is written; returns the first failure since the last report.
 * A checkpoint and the end of a run drain first: rows before them are then in the file. */
int app_rows_drain(app_rows *r, sim_err *err);

/* Drains (dropping any failure) and frees; NULL is a no-op. */
void app_rows_destroy(app_rows *r);

#endif
