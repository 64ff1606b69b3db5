/* render_gui_panel.c - the parameter panel's text, hit-testing and steps
 * (render_gui_panel.h). */
#include "render_gui_panel.h"

#include <stdio.h>
#include <string.h>

#include "render_font.h"
#include "sim_events.h"

/* Columns (characters) of a row: marker, name, value, then the two buttons. */
#define COL_NAME 2
#define NAME_W 16
#define VALUE_W 10
#define COL_MINUS (COL_NAME + NAME_W + 1 + VALUE_W + 2)
#define COL_PLUS (COL_MINUS + 4)
#define BUTTON_W 3

int render_gui_panel_rows(void)
{
    return sim_events_param_count();
}

void render_gui_panel_text(const render_gui_panel *p, const sim_scenario *sc, char *buf,
                           size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "Parameters (Tab closes)\n");
    for (int i = 0; i < render_gui_panel_rows() && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%c %-*s %*.4g  [-] [+]\n",
                                i == p->row ? '>' : ' ', NAME_W, sim_events_param_name(i),
                                VALUE_W, sim_events_param_get(sc, i));
    if (len < n)
        snprintf(buf + len, n - len, "Up/Down pick  ,/. change");
}

int render_gui_panel_hit(int px, int py, int scale, int *row, int *dir)
{
    if (px < 0 || py < 0 || scale < 1)
        return 0;
    int line = py / (RENDER_LINE * scale) - 1; /* the title is line 0 */
    if (line < 0 || line >= render_gui_panel_rows())
        return 0;
    int col = px / (RENDER_ADVANCE * scale);
    *row = line;
    *dir = col >= COL_MINUS && col < COL_MINUS + BUTTON_W  ? -1
           : col >= COL_PLUS && col < COL_PLUS + BUTTON_W ? 1
                                                          : 0;
    return 1;
}

int render_gui_panel_nudge(sim_scenario *sc, int row, int dir, sim_err *err)
{
    if (row < 0 || row >= render_gui_panel_rows() || (dir != 1 && dir != -1))
        return sim_err_set(err, SIM_EINVAL, "no such parameter row %d", row);
    double before = sim_events_param_get(sc, row);
    double v = sim_events_param_nudge(sc, row, dir);
    if (v == before)
        return sim_err_set(err, SIM_EINVAL, "%s is at its bound (%.6g)",
                           sim_events_param_name(row), before);
    return sim_events_param_set(sc, row, v, "panel", err);
}
