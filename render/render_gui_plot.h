/* render_gui_plot.h - the viewer's live plot: a ring of per-step statistics (the last
 * RENDER_GUI_PLOT_CAP steps) and its drawing into a canvas as stacked strips, one per chosen
 * statistic, over one shared step axis. Plain data and arithmetic, no SDL, no threads: the
 * owner does the locking (the simulation thread pushes, the window copies and draws).
 *
 * What the plot promises a reader: the numbers printed beside a strip are the true smallest and
 * largest sample of the steps shown (not the padded range the line is drawn in), the numbers
 * under the axis are the first and last step shown, and no text is cut by the panel's edge. */
#ifndef RENDER_GUI_PLOT_H
#define RENDER_GUI_PLOT_H

#include <stddef.h>
#include <stdint.h>

#include "render_canvas.h"
#include "sim_backend.h"

#define RENDER_GUI_PLOT_CAP 4096 /* steps kept */

/* The statistics kept per step; a mask selects some with bit (1u << stat). */
enum {
    RENDER_GUI_STAT_MOVED = 0,    /* moved agents / agents (0 with no agents) */
    RENDER_GUI_STAT_MEAN = 1,     /* field mean */
    RENDER_GUI_STAT_MAX = 2,      /* field max */
    RENDER_GUI_STAT_RESIDUAL = 3, /* max |T' - T| of the step's last Jacobi sweep */
    RENDER_GUI_STAT_AGENTS = 4    /* agent count (constant today; per-species counts later) */
};
#define RENDER_GUI_STAT_COUNT 5

/* The default preset: every statistic that changes from step to step. */
#define RENDER_GUI_PLOT_ALL                                                               \
    ((1u << RENDER_GUI_STAT_MOVED) | (1u << RENDER_GUI_STAT_MEAN) |                       \
     (1u << RENDER_GUI_STAT_MAX) | (1u << RENDER_GUI_STAT_RESIDUAL))

/* The last n (<= RENDER_GUI_PLOT_CAP) samples; sample i (0 = oldest) is at (head + i) % CAP.
 * 224 KiB: keep it in a heap-allocated owner, not on the stack. */
typedef struct render_gui_plot {
    int64_t step[RENDER_GUI_PLOT_CAP];
    double value[RENDER_GUI_STAT_COUNT][RENDER_GUI_PLOT_CAP];
    int head, n;
    double scratch[RENDER_GUI_PLOT_CAP]; /* one statistic in order, for drawing */
} render_gui_plot;

void render_gui_plot_clear(render_gui_plot *p);

/* Appends the statistics of one step (st->step, moved / agents, mean, max, residual, agents),
 * dropping the oldest sample when full. */
void render_gui_plot_push(render_gui_plot *p, const sim_stats *st);

/* Sample i (0 = oldest, < p->n) of statistic `stat` (< RENDER_GUI_STAT_COUNT). */
double render_gui_plot_at(const render_gui_plot *p, int stat, int i);

/* The step number of sample i (0 = oldest, < p->n). */
int64_t render_gui_plot_step_at(const render_gui_plot *p, int i);

/* A name of the statistic ("moved fraction", "field mean", ...; "?" when out of range). */
const char *render_gui_stat_name(int stat);

/* The colour its series is drawn in: one distinct opaque colour per statistic. */
render_rgba render_gui_stat_colour(int stat);

/* The P key's presets: RENDER_GUI_PLOT_ALL -> moved -> mean -> max -> residual -> ALL. Any
 * other mask (0, agents, a mix) goes to ALL. */
unsigned render_gui_plot_next_mask(unsigned mask);

/* A panel size (pixels) that fits the strips of mask at `scale`: 240*scale wide, 40*scale per
 * strip (one strip's room when mask selects none), plus the margins and the step axis row. */
void render_gui_plot_size(unsigned mask, int scale, int *w, int *h);

/* The true bounds of v[0..n), NaN and infinities skipped: returns how many values are finite
 * and, when that is > 0, their min and max in *lo and *hi (untouched otherwise). */
int render_gui_plot_bounds(const double *v, int n, double *lo, double *hi);

/* The labels printed beside the strip of `stat` (< RENDER_GUI_STAT_COUNT): the data's max and min over the samples held,
 * each "%.4g" (a zero prints "0", never "-0"). Returns 2 (both written), 1 (a flat series: its
 * one value in hi, lo ""), or 0 (no finite sample: both ""). hi and lo hold cap bytes. */
int render_gui_plot_bound_labels(const render_gui_plot *p, int stat, char *hi, char *lo,
                                 size_t cap);

/* The title of the strip of `stat`, "name latest" fitted to max_w pixels at `scale`: the
 * value's precision drops (%.4g, %.3g, %.2g), then the short name is tried (same precisions),
 * then that text is cut and ends in ".."; "" when not even ".." fits. With no samples the
 * title is the name alone (fitted the same way). Returns render_text_width of what it wrote,
 * always <= max_w (0 for ""). out holds cap bytes (>= 1). */
int render_gui_plot_title(const render_gui_plot *p, int stat, int max_w, int scale, char *out,
                          size_t cap);

/* The y range to draw values v[0..n) in (not for printing: see render_gui_plot_bound_labels):
 * [min, max] padded by 5% of the span on each side; a flat series gets +-max(|v| * 0.05, 1e-6)
 * around its value; NaN and infinities are skipped; no finite value gives [0, 1].
 * Always *lo < *hi. */
void render_gui_plot_range(const double *v, int n, double *lo, double *hi);

/* The pixel row of value v in a plot area of `height` rows starting at row `top`: hi maps to
 * top, lo to top + height - 1, linear in between, clamped to the area (NaN: top). */
int render_gui_plot_row(double v, double lo, double hi, int top, int height);

/* Draws the statistics whose bit is in mask (others ignored) into the whole canvas c:
 * background, frame, then per statistic, top to bottom in stat order, a strip of equal height
 * with its title (render_gui_plot_title), its series in render_gui_stat_colour over all samples
 * held (more samples than pixel columns: each column spans the min..max of its samples; NaN
 * and infinities skipped), and at its left edge the bound labels (max at the top, min at the
 * bottom, a flat series' one value at its row; left out when the canvas is too narrow to keep
 * a plot beside them). Under the strips the step axis: the first step shown under the left
 * end of the plot areas, the last under the right end, "step" between when it fits. With no
 * samples: "no steps yet"; with no statistic in mask: "no statistic". Nothing is drawn in the
 * margin of 4*scale pixels inside the frame. Uses p->scratch. */
void render_gui_plot_draw(render_gui_plot *p, unsigned mask, render_canvas *c, int scale);

#endif
