/* render_gui_plot.h - the viewer's live plot: a ring of per-step statistics (the last
 * RENDER_GUI_PLOT_CAP steps), the choice of statistic, the axis scaling, and drawing into a
 * canvas. Plain data and arithmetic, no SDL, no threads: the owner does the locking. */
#ifndef RENDER_GUI_PLOT_H
#define RENDER_GUI_PLOT_H

#include <stdint.h>

#include "render_canvas.h"
#include "sim_backend.h"

#define RENDER_GUI_PLOT_CAP 4096 /* steps kept */

enum {
    RENDER_GUI_STAT_MOVED = 0, /* moved agents / agents */
    RENDER_GUI_STAT_MEAN = 1,  /* field mean */
    RENDER_GUI_STAT_MAX = 2,   /* field max */
    RENDER_GUI_STAT_RESIDUAL = 3
};
#define RENDER_GUI_STAT_COUNT 4

/* The last n (<= RENDER_GUI_PLOT_CAP) samples; sample i (0 = oldest) is at (head + i) % CAP. */
typedef struct render_gui_plot {
    int64_t step[RENDER_GUI_PLOT_CAP];
    double value[RENDER_GUI_STAT_COUNT][RENDER_GUI_PLOT_CAP];
    int head, n;
    double scratch[RENDER_GUI_PLOT_CAP]; /* one statistic in order, for drawing */
} render_gui_plot;

void render_gui_plot_clear(render_gui_plot *p);

/* Appends the statistics of one step (st->step, moved / agents, mean, max, residual), dropping
 * the oldest sample when full. */
void render_gui_plot_push(render_gui_plot *p, const sim_stats *st);

/* Sample i (0 = oldest) of statistic `stat`. */
double render_gui_plot_at(const render_gui_plot *p, int stat, int i);

/* A short name of the statistic ("moved fraction", ...). */
const char *render_gui_stat_name(int stat);

/* The y range to draw values v[0..n) in: [min, max] padded by 5% of the span on each side; a
 * flat series gets +-max(|v| * 0.05, 1e-6) around its value; NaN and infinities are skipped;
 * no finite value gives [0, 1]. Always *lo < *hi. */
void render_gui_plot_range(const double *v, int n, double *lo, double *hi);

/* The pixel row of value v in a plot area of `height` rows starting at row `top`: hi maps to
 * top, lo to top + height - 1, linear in between, clamped to the area. */
int render_gui_plot_row(double v, double lo, double hi, int top, int height);

/* Draws statistic `stat` of p into the whole canvas: background, frame, the series scaled to
 * the area (when there are more samples than columns each column shows the min..max of its
 * samples), the title with the latest value, and the y range. Uses p->scratch. */
void render_gui_plot_draw(render_gui_plot *p, int stat, render_canvas *c, int scale);

#endif
