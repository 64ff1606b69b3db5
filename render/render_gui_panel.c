/* render_gui_panel.c - the parameter panel's text, hit-testing and steps
 * (render_gui_panel.h). */
#include "render_gui_panel.h"

#include <stdio.h>
#include <string.h>

#include "render_font.h"
#include "sim_events.h"

/* Columns (characters) of a row: marker, name, value, then the two buttons. The name column is
 * as wide as the scenario's longest name, at least NAME_W (the plain scenario's layout). */
#define COL_NAME 2
#define NAME_W 16
#define VALUE_W 10
#define BUTTON_W 3

/* The width of the name column for sc's parameters. */
static int name_width(const sim_scenario *sc)
{
    char name[SIM_EVENTS_KEY_MAX];
    int w = NAME_W;
    for (int i = 0; i < render_gui_panel_rows(sc); i++) {
        int len = sim_events_param_name(sc, i, name, sizeof name);
        if (len > w)
            w = len;
    }
    return w;
}

/* The first column of [-] for sc; [+] is 4 columns to its right. */
static int col_minus(const sim_scenario *sc)
{
    return COL_NAME + name_width(sc) + 1 + VALUE_W + 2;
}

int render_gui_panel_rows(const sim_scenario *sc)
{
    return sim_events_param_count(sc);
}

void render_gui_panel_text(const render_gui_panel *p, const sim_scenario *sc, char *buf,
                           size_t n)
{
    char name[SIM_EVENTS_KEY_MAX];
    int w = name_width(sc);
    size_t len = (size_t)snprintf(buf, n, "Parameters (Tab closes)\n");
    for (int i = 0; i < render_gui_panel_rows(sc) && len < n; i++) {
        sim_events_param_name(sc, i, name, sizeof name);
        len += (size_t)snprintf(buf + len, n - len, "%c %-*s %*.4g  [-] [+]\n",
                                i == p->row ? '>' : ' ', w, name, VALUE_W,
                                sim_events_param_get(sc, i));
    }
    if (len < n)
        snprintf(buf + len, n - len, "Up/Down pick  ,/. change");
}

int render_gui_panel_hit(const sim_scenario *sc, int px, int py, int scale, int *row, int *dir)
{
    if (px < 0 || py < 0 || scale < 1)
        return 0;
    int line = py / (RENDER_LINE * scale) - 1; /* the title is line 0 */
    if (line < 0 || line >= render_gui_panel_rows(sc))
        return 0;
    int col = px / (RENDER_ADVANCE * scale), minus = col_minus(sc), plus = minus + 4;
    *row = line;
    *dir = col >= minus && col < minus + BUTTON_W ? -1
           : col >= plus && col < plus + BUTTON_W ? 1
                                                  : 0;
    return 1;
}

int render_gui_panel_nudge(sim_scenario *sc, int row, int dir, sim_err *err)
{
    if (row < 0 || row >= render_gui_panel_rows(sc) || (dir != 1 && dir != -1))
        return sim_err_set(err, SIM_EINVAL, "no such parameter row %d", row);
    double before = sim_events_param_get(sc, row);
    double v = sim_events_param_nudge(sc, row, dir);
    if (v == before) {
        char name[SIM_EVENTS_KEY_MAX];
        sim_events_param_name(sc, row, name, sizeof name);
        return sim_err_set(err, SIM_EINVAL, "%s is at its bound (%.6g)", name, before);
    }
    return sim_events_param_set(sc, row, v, "panel", err);
}
