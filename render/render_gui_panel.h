/* render_gui_panel.h - the viewer's parameter panel: the run-time parameters of the scenario
 * (sim_events.h's list: agents.noise ... field.decay, or the noise and radius of each
 * [species.NAME] and the diffusion, sweeps and decay of each [field.NAME]) with their values,
 * one row each with [-] and [+] buttons, and the rule by which a click, a key or a drag changes
 * a value. Plain text and arithmetic, no SDL: the HUD draws the text, the control layer
 * hit-tests clicks with render_gui_panel_hit and applies render_gui_panel_nudge. The rows
 * depend on the scenario's sections only, so one scenario's row numbers hold for every
 * scenario the running simulation takes. */
#ifndef RENDER_GUI_PANEL_H
#define RENDER_GUI_PANEL_H

#include <stddef.h>

#include "sim_scenario.h"
#include "sim_status.h"

typedef struct render_gui_panel {
    int open; /* shown */
    int row;  /* the selected parameter (keys change it) */
} render_gui_panel;

/* Bytes that always hold the panel's text: 20 rows (4 species, 4 fields) of at most 62
 * characters, the title and the hints. */
#define RENDER_GUI_PANEL_TEXT_MAX 2048

/* Number of parameter rows of sc. */
int render_gui_panel_rows(const sim_scenario *sc);

/* The panel's text for sc: a title line, one line per parameter (the selected one marked with
 * '>'), then a line of key hints. Lines are separated by '\n'. The name column is as wide as
 * sc's longest name (at least 16 characters), so the buttons line up. */
void render_gui_panel_text(const render_gui_panel *p, const sim_scenario *sc, char *buf,
                           size_t n);

/* Which control the point (px, py) hits on sc's panel, in pixels from the panel text's
 * top-left corner at font scale `scale`: returns 1 and sets *row and *dir (-1 for [-], +1 for
 * [+], 0 elsewhere on the row) when on a parameter row, 0 elsewhere. */
int render_gui_panel_hit(const sim_scenario *sc, int px, int py, int scale, int *row, int *dir);

/* Changes parameter `row` of sc by one step in direction dir (+1 / -1), by the panel's steps
 * (sim_events_param_nudge: noise by 0.01, deposit, diffusion and decay by a factor 1.25, radius
 * and sweeps by 1), set through the scenario's own parser so it is exact and range-checked.
 * Already at a bound: SIM_EINVAL saying so, sc unchanged. */
int render_gui_panel_nudge(sim_scenario *sc, int row, int dir, sim_err *err);

#endif
