/* render_gui_session.h - what a viewer session did, written as it happens: every session (and
 * every restart within it) gets a fresh DIR/session_NNN/ holding
 *   scenario.ini  the scenario it started from (seed included),
 *   stats.csv     one row per step, the columns of `horizon run`'s stats.csv,
 *   events.csv    every parameter change and paint stroke with the step it applies after
 *                 (sim_events.h's format),
 * so that `horizon run DIR/session_NNN/scenario.ini --events DIR/session_NNN/events.csv` replays
 * the session to the same checksums. Rows are written whole (one write each) and flushed, so a
 * killed viewer leaves whole rows. Used from the simulation thread only; no locking here. */
#ifndef RENDER_GUI_SESSION_H
#define RENDER_GUI_SESSION_H

#include <stdint.h>

#include "sim.h"

typedef struct render_gui_session render_gui_session;

/* Starts a session under dir (which exists and the caller holds locked): the first free
 * dir/session_NNN/ (NNN from 001), its scenario.ini and the headers of the two CSV files.
 * SIM_EIO with the path and the reason on failure (nothing is left open). */
int render_gui_session_open(const char *dir, const sim_scenario *sc, render_gui_session **out,
                            sim_err *err);

/* Closes the files and frees s; NULL is a no-op. */
void render_gui_session_close(render_gui_session *s);

/* Ends the current session_NNN and starts the next one for a restarted simulation of sc. */
int render_gui_session_restart(render_gui_session *s, const sim_scenario *sc, sim_err *err);

/* Appends one stats row / one events line (text as sim_events formats it, newline included). */
int render_gui_session_stats(render_gui_session *s, const sim_stats *st, sim_err *err);
int render_gui_session_event(render_gui_session *s, const char *line, sim_err *err);

/* The current session directory ("DIR/session_001"). */
const char *render_gui_session_dir(const render_gui_session *s);

#endif
