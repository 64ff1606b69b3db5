/* sim_sweep.h - sweep files: a base scenario, fixed values on top of it, and parameter lists
 * (grids or zips) times replicates, expanded lazily into runs for `horizon sweep`.
 *
 * Sweep file format (INI, read by libinih like scenario files):
 *
 *   ; noise vs clustering on the default scenario
 *   [sweep]
 *   base = default          ; the base scenario (below)
 *   replicates = 8          ; runs per combination, 1 .. 100000 (default 1)
 *   combine = grid          ; grid (default) | zip
 *   agents.noise = 0, 0.05, 0.1, 0.2        ; a list
 *   field.decay = 0.001 .. 0.02 / 8         ; a linear range
 *   field.diffusion = log 0.01 .. 1 / 5     ; a geometric range
 *   [run]                   ; any scenario section: fixed values for every run
 *   steps = 500
 *
 * [sweep] (required, once) holds three settings and the swept keys:
 *   base        "default" is the built-in default scenario (as `horizon run` with no file);
 *               anything else is a scenario .ini path, relative to the sweep file's
 *               directory unless absolute (write ./default for a file named "default").
 *   replicates  R, an integer 1 .. 100000; default 1.
 *   combine     grid: every combination of the lists; zip: the i-th value of every list
 *               together (all lists must have the same length).
 *   section.key any scenario key (`world.boundary`, `agents.noise`, ...), given as
 *     a list       "v1, v2, ..." - comma-separated items, each trimmed of blanks, none empty,
 *                  none holding a comma; any text the key accepts (numbers, enum names:
 *                  world.boundary = periodic, wall). A long list may continue on the
 *                  following lines, indented; a line break separates items as a comma does
 *                  (a comma ending the line is fine too).
 *     a range      "A .. B / N" - N evenly spaced values A + (B-A)*i/(N-1), i = 0 .. N-1;
 *     a log range  "log A .. B / N" - A * (B/A)^(i/(N-1)), with A > 0 and B > 0.
 *                  A and B are numbers (B < A counts down), N is an integer 2 .. 100000.
 *                  The first value is exactly A and the last exactly B. A value is a range
 *                  when the text before its first ".." (after an optional "log ") is a
 *                  number; otherwise it is a list (so "../out, ../b" is two paths).
 *                  Values are computed in double precision, then written with the fewest
 *                  significant digits that read back within 4*DBL_EPSILON times the larger
 *                  of |A| and |B| (a range) or times the value (a log range) of the computed
 *                  double - its rounding error - so 0 .. 0.3 / 16 gives 0, 0.02, 0.04, 0.06,
 *                  ... 0.3; whole numbers have no exponent (10 .. 1000000 / 3 gives 10,
 *                  500005, 1000000). That text is the value the run uses: `horizon run --set
 *                  key=TEXT` reproduces it.
 *   Every value is checked as a --set of its key would be: an integer key given a
 *   non-integral range value is refused with the scenario's message and the sweep's line.
 *   A list or range has at most 100000 values.
 * Other sections ([world], [field], [agents], [run], [output]) hold fixed values for every
 * run, on top of the base. A key may not be both fixed and swept.
 * Comments start with ';' or '#' at the start of a line, or with ';' after a blank within a
 * line. A line has at most 199 characters (longer lists continue on indented lines).
 *
 * Runs. With swept keys k0, k1, ... in file order, n0, n1, ... values each and R replicates:
 *   grid: runs = n0*n1*...*R, and run = ((i0*n1 + i1)*n2 + i2)*R + r: the first key varies
 *         slowest, the last fastest, and the replicate index r fastest of all;
 *   zip:  runs = n*R, and run = i*R + r.
 * With no swept keys there are R runs. A sweep has at most 10000000 runs.
 * Seeds: replicate r of a run uses run.seed + r (unsigned 64-bit, wrapping), where run.seed is
 * the base's (after fixed values and --set) or, when run.seed is swept, the run's value of it;
 * seeds of different combinations may then coincide, which is allowed.
 * The scenario of a run: the base, then the fixed values, then the --set overrides, then the
 * run's swept values, then its seed.
 *
 * Checks at load. Each error is one line, "file:line: key: what (allowed ...)", status
 * SIM_EINVAL: no [sweep]; a section or key given twice ("key: duplicate (first at line N)"); an
 * unknown section, key or value (for scenario keys, the scenario module's message); a base
 * that cannot be read (named); R out of range; an unknown combine; zip lists of different
 * lengths (both keys and lengths named); range syntax (no "/ N", N out of 2 .. 100000, A or B
 * not a number, a log range with A <= 0 or B <= 0); more than 10000000 runs; a --set that
 * names a swept key ("--set K=V: K is swept (FILE:LINE); change its list there"). Errors found
 * in the file are reported in line order, the first one only. Then every run's scenario is
 * built and checked with sim_scenario_validate when there are at most 100000 runs; with more,
 * the first and the last run and each value of each list alone on the base are, and
 * sim_sweep_scenario checks each run it builds. A run that fails reads
 * "file:line: <the scenario's message> (run 17: agents.count=5000, world.width=64)", the line
 * being where the value at fault was set (a swept or fixed line of the sweep file, a line of
 * the base), or "--set ...:"/"command line:" when an override made it fail.
 *
 * Thread safety: a loaded sweep is never modified; every function taking a const sim_sweep *
 * may be called from several threads at once. */
#ifndef SIM_SWEEP_H
#define SIM_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim_scenario.h"
#include "sim_status.h"

#define SIM_SWEEP_MAX_RUNS 10000000LL      /* runs in one sweep */
#define SIM_SWEEP_MAX_VALUES 100000        /* values of one list or range */
#define SIM_SWEEP_MAX_REPLICATES 100000
#define SIM_SWEEP_VALIDATE_ALL 100000      /* up to this many runs, load validates each one */

typedef struct sim_sweep sim_sweep;

/* Loads the sweep file `path`. sets[0 .. n_sets-1] are "section.key=value" overrides applied
 * to the base scenario after the file's fixed values (as for `horizon run`); a --set that names
 * a swept key is refused ("--set K=V: K is swept (FILE:LINE); change its list there").
 * On success *out owns a new sweep (sim_sweep_destroy). On failure *out is NULL and err holds
 * one line: SIM_EIO when the sweep file cannot be read, SIM_ENOMEM when memory runs out,
 * SIM_EINVAL for every other problem (see the checks above). The value lists are kept as text;
 * a run's scenario is built on demand, so memory does not grow with the number of runs. */
int sim_sweep_load(const char *path, char **sets, int n_sets, sim_sweep **out, sim_err *err);

/* How `base = NAME` finds a model of the library when no file NAME exists next to the sweep
 * file: the app installs its lookup (horizon models); fn writes the path of NAME's scenario into
 * path (n bytes) and returns SIM_OK, or a status with the message in err. NULL: files only. */
typedef int (*sim_sweep_resolver)(const char *name, char *path, size_t n, sim_err *err);
void sim_sweep_set_resolver(sim_sweep_resolver fn);

/* Frees the sweep; NULL is a no-op. */
void sim_sweep_destroy(sim_sweep *sw);

/* Number of runs (>= 1). */
int64_t sim_sweep_runs(const sim_sweep *sw);

/* Number of swept keys (0 when only replicates vary). */
int sim_sweep_keys(const sim_sweep *sw);

/* The name of swept key k (0 <= k < sim_sweep_keys) in file order, "agents.noise"; NULL when
 * k is out of range. */
const char *sim_sweep_key(const sim_sweep *sw, int k);

/* The line of the sweep file that sweeps key k; 0 when k is out of range. */
int sim_sweep_key_line(const sim_sweep *sw, int k);

/* Number of values in key k's list (for a range, N); 0 when k is out of range. */
int64_t sim_sweep_key_values(const sim_sweep *sw, int k);

/* The i-th value text of key k's list; NULL when k or i is out of range. */
const char *sim_sweep_key_value(const sim_sweep *sw, int k, int64_t i);

/* Index into key k's list of the value that run `run` uses; -1 when out of range. */
int64_t sim_sweep_value_index(const sim_sweep *sw, int64_t run, int k);

/* The value text of key k in run `run` (0 <= run < sim_sweep_runs), owned by sw and valid
 * until sim_sweep_destroy; NULL when run or k is out of range. */
const char *sim_sweep_value(const sim_sweep *sw, int64_t run, int k);

/* R, the number of replicates (runs per combination). */
int sim_sweep_replicates(const sim_sweep *sw);

/* The 0-based replicate index r of run `run` (run % R); -1 when run is out of range. */
int sim_sweep_replicate(const sim_sweep *sw, int64_t run);

/* The seed of run `run`: its run.seed + its replicate index, modulo 2^64; 0 when run is out of
 * range. */
uint64_t sim_sweep_seed(const sim_sweep *sw, int64_t run);

/* "grid" or "zip". */
const char *sim_sweep_combine(const sim_sweep *sw);

/* The sweep file's path as given to sim_sweep_load. */
const char *sim_sweep_path(const sim_sweep *sw);

/* "default", or the base scenario's path as resolved (the sweep file's directory joined with
 * the base value, e.g. "assets/sweeps/../scenarios/large.ini"). */
const char *sim_sweep_base_name(const sim_sweep *sw);

/* The base scenario with the file's fixed values and the --set overrides applied (not the
 * swept values; its seed is replicate 0's unless run.seed is swept). Owned by sw. */
const sim_scenario *sim_sweep_base(const sim_sweep *sw);

/* Builds the scenario of run `run` into *out: the base, the run's swept values, its seed, and
 * validates it. SIM_EINVAL with a message when run is out of range or (possible only for
 * sweeps of more than SIM_SWEEP_VALIDATE_ALL runs, which load does not check one by one) the
 * run fails sim_scenario_validate; *out is then unspecified. */
int sim_sweep_scenario(const sim_sweep *sw, int64_t run, sim_scenario *out, sim_err *err);

/* Writes into buf (n bytes, always NUL-terminated, cut short when n is too small) the
 * `horizon run` options that turn the base scenario into run `run`: one --set per swept key
 * in file order, then the seed, e.g. "--set agents.noise=0.1 --set run.seed=43". An argument
 * holding characters a shell would interpret is single-quoted. `horizon run BASE.ini ARGS`
 * reproduces the run when BASE.ini is sim_sweep_base written by sim_scenario_write_ini.
 * An out-of-range run gives "". */
void sim_sweep_run_args(const sim_sweep *sw, int64_t run, char *buf, size_t n);

/* Writes the expanded sweep as one JSON object, without a trailing newline: "file", "base",
 * "combine", "replicates", "runs", "seed" (the base's run.seed), "keys" (an array of {"key",
 * "line", "values": [text, ...]} in file order, values as JSON strings holding the exact
 * texts) and "scenario" (sim_sweep_base, as sim_scenario_write_json). `indent` is the column
 * of the closing brace; members are indented two more. */
void sim_sweep_write_json(const sim_sweep *sw, FILE *f, int indent);

#endif
