/* app.h - what the subcommands of the horizon executable share: scenario loading from the
 * command line, backend choice, exit codes, and option parsing helpers. */
#ifndef APP_H
#define APP_H

#include <stdint.h>
#include <stdio.h>

#include "sim.h"

/* Exit codes (documented in the README). */
enum {
    APP_EXIT_OK = 0,
    APP_EXIT_FAIL = 1,   /* a run failed: I/O error, device error */
    APP_EXIT_USAGE = 2,  /* bad command line, scenario or input file; backend not available */
    APP_EXIT_NOMEM = 3,  /* out of host or device memory */
    APP_EXIT_SIGINT = 130,
    APP_EXIT_SIGTERM = 143
};

/* Maps a sim_status to an exit code. */
int app_exit_code(int status);

/* Subcommands; argv[0] is the subcommand name. */
int app_run_main(int argc, char **argv);
int app_info_main(int argc, char **argv);
int app_bench_main(int argc, char **argv);
int app_gui_main(int argc, char **argv);
int app_sweep_main(int argc, char **argv);
int app_models_main(int argc, char **argv); /* app_models.c */

/* The sweep section of `horizon bench` (app_bench_sweep.c): `runs` runs of `steps` steps (0: the
 * defaults for the backend) through horizon sweep, against one after another and separate processes; prints a
 * table and appends `,"sweep": {...}` to json when not NULL. */
int app_bench_sweep(FILE *json, const char *backend, int quick, int runs, int steps);

/* What the sections of `horizon bench` share (app_bench_util.c):
 *   app_bench_median:      the median of v[0..n-1] (n >= 1; v is sorted in place);
 *   app_bench_remove_tree: removes dir and everything under it (best effort);
 *   app_bench_run_self:    runs this binary with argv (argv[0] is set to its path, then back
 *                          to NULL; NULL-terminated) and waits: SIM_OK when it exits 0, else
 *                          SIM_EIO. */
double app_bench_median(double *v, int n);
void app_bench_remove_tree(const char *dir);
int app_bench_run_self(char **argv);

/* The output section of `horizon bench` (app_bench_output.c): `horizon run` processes of this
 * binary with no output, statistics every step, a frame every 100 steps, a dump and a
 * checkpoint every K steps, interleaved; each one's cost against none and its target. */
int app_bench_output(FILE *json, const char *backend, int quick);

/* The batched-steps section of `horizon bench` (app_bench_batch.c), on the backend `ops` (the
 * CUDA one): per-step vs batched steps/s of the default scenario and a 64^2 world, and the cost
 * of statistics every step in batches on the default and the large scenario (2048^2 when quick),
 * with their targets; prints a table and appends `,"gpu_batch": {...}` to json when not NULL.
 * SIM_EINVAL when batched rows differ from per-step rows; the message is in err. */
int app_bench_batch(FILE *json, const sim_backend_ops *ops, int quick, sim_err *err);

/* One option matcher for "--name value" and "--name=value": returns 1 and sets *value (and
 * advances *i past a separate value) when argv[*i] is that option; prints a usage error and
 * sets *bad when the value is missing. */
int app_opt(int argc, char **argv, int *i, const char *name, const char **value, int *bad);

/* A command-line shortcut for a scenario key: `--steps 10` means `--set run.steps=10`. */
typedef struct app_shortcut {
    const char *opt, *key;
} app_shortcut;

/* When argv[*i] is one of the n shortcuts, returns 1 and sets *assign to a malloc'ed
 * "section.key=value" for the caller to free (NULL, with *bad set, when the value is missing or
 * memory runs out). Returns 0 otherwise. */
int app_opt_shortcut(int argc, char **argv, int *i, const app_shortcut *table, size_t n,
                     char **assign, int *bad);

/* Parses an integer option value in [lo, hi]; prints "horizon: --name: ..." and returns 0 on
 * error. */
int app_parse_i64(const char *name, const char *text, int64_t lo, int64_t hi, int64_t *out);

/* Loads a scenario: defaults, then the file (or the built-in default when path is NULL), then
 * the --set assignments in order. path is a SCENARIO argument: a file, or the name of a model
 * in the library (app_models_resolve). Prints the one-line error and returns the status. */
int app_load_scenario(const char *path, char **sets, int n_sets, sim_scenario *sc);

/* Picks a backend by name ("auto", "cpu", "cuda"). auto uses CUDA when a device is usable and
 * otherwise prints a one-line notice and uses the CPU. Prints the error and returns non-zero
 * when the named backend is not available. */
int app_pick_backend(const char *name, const sim_backend_ops **ops, int quiet);

/* Threads for the CPU backend: the request, or every available core when 0; on a machine that
 * app/main.c found busy (HORIZON_BUSY_CORES other tasks), no more than the cores left, at least
 * one (threads waiting on cores that other work holds made more threads slower than one). */
int app_threads(int requested);

/* `horizon run` on the CPU backend with frames and no --threads, on at least this many threads:
 * one thread fewer, whose core the frame encoders keep (app_run.c). */
#define APP_FRAME_CORE_MIN 8

/* The OpenMP wait policy in force, as app/main.c (or the user) set it: *key is
 * "OMP_WAIT_POLICY" or "GOMP_SPINCOUNT", and the value is returned (NULL: neither is set,
 * libgomp's default; *key is then "OMP_WAIT_POLICY"). */
const char *app_omp_wait(const char **key);

/* Seconds on a monotonic clock. */
double app_now(void);

#endif
