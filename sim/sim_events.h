/* sim_events.h - the events file: parameter changes and paints with the step they apply at, as
 * the live viewer records them (DIR/events.csv) and `horizon run --events FILE` replays them, so
 * that a session of turning knobs is reproduced to the bit. Also the list of the parameters a
 * running simulation may change, for the viewer's panel: they depend on the scenario's
 * sections.
 *
 * File format: CSV text, one event a line.
 *
 *   step,event,value
 *   0,agents.noise,0.05
 *   120,field.diffusion,0.5
 *   130,paint,10 20 4 2.5
 *
 *   - Line 1 is exactly the header `step,event,value`. Lines end in LF or CRLF. Empty lines and
 *     lines whose first non-blank character is '#' are skipped anywhere after the header
 *     (a UTF-8 byte order mark before the header is allowed too).
 *   - Each other line has three fields: the text up to the first comma, the text up to the
 *     second, and the rest of the line (the value). Blanks (spaces, tabs) around a field are
 *     ignored.
 *   - `step`: a decimal integer in 0 .. 10^15 (digits only). The event applies after `step`
 *     steps are done, before step `step`+1 runs: step 0 changes the run from its first step.
 *     Steps never decrease down the file. Several events at one step apply in file order.
 *   - `event` and `value`:
 *       agents.noise, agents.deposit, agents.radius, field.diffusion, field.sweeps, field.decay,
 *       species.NAME.noise, species.NAME.radius, field.NAME.diffusion, field.NAME.sweeps,
 *       field.NAME.decay (NAME a valid section name, sim_name_valid):
 *         the new value of that scenario key, parsed and range-checked exactly as in a
 *         scenario file (the README's table: noise [0, 1], deposit +-1e6, radius 0 .. 64 an
 *         integer, diffusion (0, 1], sweeps 0 .. 10000 an integer, decay [0, 0.999999]).
 *         The key must be one of the run's scenario's run-time parameters (the list below),
 *         which sim_events_check and sim_events_apply check: a named key needs its section
 *         in the scenario, and a shorthand key a scenario without named sections of its kind.
 *       paint: `X Y RADIUS AMOUNT`, separated by blanks: integers X in [0, width) and Y in
 *         [0, height) (checked against the world by sim_events_check), RADIUS in
 *         0 .. SIM_MAX_RADIUS, and AMOUNT a finite number (read as a float). It adds AMOUNT to
 *         every cell within RADIUS of (X, Y) (dx^2 + dy^2 <= RADIUS^2), as sim_paint does: cells
 *         off the grid are left out, on a periodic grid too (no wrap).
 *   - Within one step, the key changes take effect together (a later line of the same key
 *     wins) and then the paints apply in file order. A paint depends on no parameter and a
 *     parameter change keeps the state exactly, so this is the result of applying the lines one
 *     by one in file order.
 *   - Errors are one line, `FILE:LINE: what is wrong (allowed ...)`, and the file is refused
 *     whole: SIM_EINVAL, or SIM_EIO when it cannot be read.
 *
 * Writers (the viewer) produce this format with sim_events_write_header and one
 * sim_events_format_* line per event; every number is printed so that it reads back to the same
 * bits (%.9g for floats, %.17g for doubles). */
#ifndef SIM_EVENTS_H
#define SIM_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"

#define SIM_EVENTS_HEADER "step,event,value"
#define SIM_EVENTS_MAX_STEP 1000000000000000LL /* 10^15, as run.steps */
#define SIM_EVENTS_VALUE_MAX 64                /* bytes of a value text, NUL included */
#define SIM_EVENTS_KEY_MAX 48 /* bytes of a parameter's name, NUL included: holds
                                 field.NAME.diffusion with the longest NAME (39 bytes) */
#define SIM_EVENTS_FILE_MAX (256u << 20)       /* bytes of an events file */

typedef enum sim_event_kind {
    SIM_EVENT_SET = 0,  /* a parameter takes a new value */
    SIM_EVENT_PAINT = 1 /* sim_paint */
} sim_event_kind;

/* One line of the file. */
typedef struct sim_event {
    int64_t step; /* applies after this many steps */
    int kind;     /* sim_event_kind */
    int line;     /* line in the file, for messages */
    char key[SIM_EVENTS_KEY_MAX]; /* SET: the parameter's name, "species.sheep.noise" */
    char value[SIM_EVENTS_VALUE_MAX]; /* SET: the value text as given, blanks trimmed */
    int x, y, radius;                 /* PAINT: centre cell and radius in cells */
    float amount;                     /* PAINT: added to each cell */
} sim_event;

/* The events of a file in file order (steps non-decreasing). Owned buffers; a zeroed struct is
 * empty. */
typedef struct sim_events {
    sim_event *ev;
    size_t n;
    char *text;  /* the file's bytes (len, plus a NUL), e.g. to copy into the run directory */
    size_t len;
    char name[SIM_PATH_MAX]; /* the file's name in messages */
} sim_events;

/* Parses text (NUL-terminated) named `name` in messages into *out, which is overwritten (not
 * released: pass an empty one). On failure *out is empty and err holds the one-line message;
 * SIM_EINVAL, or SIM_ENOMEM. */
int sim_events_parse_string(const char *text, const char *name, sim_events *out, sim_err *err);

/* Reads and parses the file at path (see parse_string); SIM_EIO when it cannot be read, and
 * SIM_EINVAL for a file with a NUL byte or larger than SIM_EVENTS_FILE_MAX. */
int sim_events_load(const char *path, sim_events *out, sim_err *err);

/* Frees the buffers; e becomes empty. NULL and an empty e are fine. */
void sim_events_release(sim_events *e);

/* Checks what depends on the run's scenario, in file order: every key is a run-time parameter
 * of sc (SIM_EINVAL with "FILE:LINE: species.wolf.noise: the scenario has no [species.wolf]
 * section (allowed the keys of its sections species.sheep, field.grass)"), and every paint's
 * X < width and Y < height of sc ("FILE:LINE: paint: ..." for the first one outside). */
int sim_events_check(const sim_events *e, const sim_scenario *sc, sim_err *err);

/* The index of the first event at step >= step (e->n when there is none): where a run that
 * stands at `step` (a resumed one) starts applying. */
size_t sim_events_first_at(const sim_events *e, int64_t step);

/* The number of events at steps >= step: those a run of `step` steps never applies. */
size_t sim_events_count_from(const sim_events *e, int64_t step);

/* Applies the events at step sim_steps_done(s), starting at e->ev[*next], and advances *next
 * past them: their key changes (each resolved against the simulation's scenario, refused as
 * sim_events_check refuses it) through one sim_set_params, then their paints through sim_paint,
 * in file order. Nothing to do (the next event is at a later step, or *next == e->n) is SIM_OK.
 * An event at *next whose step is already past (a caller that skipped a step) is SIM_EINVAL: it
 * would silently change the results. On failure err says which line and why ("FILE:LINE: ...",
 * with the simulation's message), *next stays at the first event not applied, and the
 * simulation holds what was applied before it; it is usable (sim_set_params keeps the old
 * instance on failure). */
int sim_events_apply(const sim_events *e, size_t *next, sim *s, sim_err *err);

/* ---- writing the file ---- */

/* Writes the header line (SIM_EVENTS_HEADER and a newline). */
void sim_events_write_header(FILE *f);

/* Formats one line, newline included, into buf (n bytes): the value of run-time parameter `key`
 * ("field.diffusion", one of sc's sim_events_param_name) in sc at `step`
 * ("120,field.diffusion,0.5\n"), exact: it parses back to the same bits. Returns the length as
 * snprintf does (>= n: cut short), or -1 (buf untouched) for another key or a negative step. */
int sim_events_format_set(char *buf, size_t n, int64_t step, const char *key,
                          const sim_scenario *sc);

/* The same for a paint ("130,paint,10 20 4 2.5\n"); amount with %.9g (exact for a float). */
int sim_events_format_paint(char *buf, size_t n, int64_t step, int x, int y, int radius,
                            float amount);

/* ---- the run-time parameters ----
 *
 * A scenario's list, the keys sim_set_params may change (SIM_KEYS_RUNTIME in sim_scenario.h):
 * first the species' keys, agents.noise, agents.deposit, agents.radius when the scenario has no
 * [species.NAME] section, else species.NAME.noise and species.NAME.radius for each in section
 * order; then the fields' keys, field.diffusion, field.sweeps, field.decay when it has no
 * [field.NAME] section, else field.NAME.diffusion, field.NAME.sweeps and field.NAME.decay for
 * each. A plain scenario's list is therefore 0 agents.noise, 1 agents.deposit, 2 agents.radius,
 * 3 field.diffusion, 4 field.sweeps, 5 field.decay. An index i is valid for the scenario it
 * came from (or one with the same sections).
 *
 * Panel steps (sim_events_param_nudge), named keys as their shorthand counterparts: noise to
 * the next multiple of 0.01 up or down; radius and sweeps +-1; deposit, diffusion and decay
 * times 1.25 up, divided by 1.25 down (a negative deposit goes up towards 0). From 0, deposit
 * steps to +-0.01 and decay up to 0.001; a step down that would leave deposit or decay nearer 0
 * than that gives 0. Every result is clamped into the key's range. */

int sim_events_param_count(const sim_scenario *sc); /* 6 for a plain scenario */
/* The name of parameter i of sc ("agents.noise", "species.sheep.radius") into buf (n bytes;
 * SIM_EVENTS_KEY_MAX always holds it): the snprintf length, or -1 and "" for a bad i. */
int sim_events_param_name(const sim_scenario *sc, int i, char *buf, size_t n);
int sim_events_param_find(const sim_scenario *sc, const char *name); /* its index, or -1 */
int sim_events_param_is_integer(const sim_scenario *sc, int i); /* 1 for radius and sweeps */

/* The value of parameter i in sc as a double (exact: ints, floats and doubles all fit); 0 for
 * a bad i. */
double sim_events_param_get(const sim_scenario *sc, int i);

/* Sets parameter i of sc to v through the scenario's own parse and range check (so the stored
 * value is exactly (float)v for a float key, v for a double, and an integer key refuses a
 * non-integral v). SIM_EINVAL with "agents.noise: out of range '2' (allowed 0 .. 1)" or
 * "species.sheep.noise: ..." (the scenario's message, from `where` when not NULL); sc
 * unchanged then. */
int sim_events_param_set(sim_scenario *sc, int i, double v, const char *where, sim_err *err);

/* The value text of parameter i in sc, as the file holds it (%.9g / %.17g / %d): returns the
 * snprintf length, or -1 for a bad i. */
int sim_events_param_format(const sim_scenario *sc, int i, char *buf, size_t n);

/* The panel's next value of parameter i from its value in sc, `dir` steps up (> 0) or down
 * (< 0), by the steps above, clamped into the key's range (an open bound is never reached: the
 * value stays). Pass the result to sim_events_param_set. */
double sim_events_param_nudge(const sim_scenario *sc, int i, int dir);

#endif
