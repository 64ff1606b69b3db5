/* app_sweep.h - the parts of `horizon sweep`: one run of a sweep turned into its sweep.csv row
 * (app_sweep_run.c), and the message transport between MPI ranks (app_mpi.c). The command
 * itself (options, output directory, workers, resume) is app_sweep.c. */
#ifndef APP_SWEEP_H
#define APP_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"
#include "sim_sweep.h"

/* The longest sweep.csv row (swept values are short numbers or names; a longer row is an
 * error, not a truncation). */
#define APP_SWEEP_ROW_MAX 8192

/* How each run of a sweep is run. */
typedef struct app_sweep_plan {
    const sim_backend_ops *ops;
    int threads;      /* CPU threads per run */
    int64_t window;   /* the summary means cover the last `window` steps */
    int keep_stats;   /* DIR/runs/run_NNNNNN/stats.csv */
    int keep_frames;  /* DIR/runs/run_NNNNNN/frames/ (when the scenario has frames_every) */
    const char *dir;  /* the sweep's output directory */
} app_sweep_plan;

/* Writes the sweep.csv header (with its newline) into buf. SIM_EINVAL when it does not fit. */
int app_sweep_header(const sim_sweep *sw, char *buf, size_t n, sim_err *err);

/* Runs run `run` of the sweep from its first step to its last, exactly as `horizon run` with
 * that run's scenario would (the same final checksum), and writes its sweep.csv row (with its
 * newline) into row: run index, the swept values, replicate, seed, final checksum, the last
 * step's statistics and their means over the last plan->window steps. `stop` (may be NULL) is
 * polled between steps: when it returns non-zero the run is abandoned and APP_SWEEP_STOPPED
 * returned. Other failures return their status with "run N: what" in err. */
#define APP_SWEEP_STOPPED (-2)
int app_sweep_run(const sim_sweep *sw, int64_t run, const app_sweep_plan *plan,
                  int (*stop)(void), char *row, size_t n, sim_err *err);

/* ---- ranks (app_mpi.c): without MPI (or not started by mpirun) one rank, 0 of 1 ---- */

enum { APP_MPI_ROW = 1, APP_MPI_DONE = 2 };

/* Starts MPI when the process was started by mpirun (its environment says so) and the build has
 * MPI; sets *rank and *size (0 and 1 otherwise). Returns SIM_OK or SIM_EIO with a message. */
int app_mpi_start(int *rank, int *size, sim_err *err);
void app_mpi_stop(void);
/* Rank 0's bytes to every rank (a no-op with one rank). */
void app_mpi_bcast(void *buf, size_t n);
/* From a rank > 0 to rank 0: a row (APP_MPI_ROW), or the end of its work (APP_MPI_DONE, text =
 * "STATUS message"). */
void app_mpi_send(int tag, const char *text);
/* On rank 0: a waiting message, if any: returns 1 with its tag, source and text, else 0. */
int app_mpi_poll(int *tag, int *source, char *text, size_t n);

#endif
