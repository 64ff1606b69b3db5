/* render_legend.h - the colour bar (legend) of a picture: the colormap as a horizontal bar, the
 * values of its two ends under it, and a one-line label above it that says what the colours
 * show and how their range was chosen, on a dark semi-opaque panel. Drawn with render_canvas
 * and render_font, so frames (render_legend_stamp) and the viewer's overlay (render_legend_draw)
 * look the same; no SDL here.
 *
 * Layout, in font pixels (each a scale x scale block):
 *
 *   +--------------------------------------+   panel: PAD on every side
 *   | label text (one line)                |   RENDER_CELL_H rows
 *   |                                      |   3 rows
 *   | [bar: LUT entry 0 ........ entry 255] |   BAR_H rows, a light outline just outside it
 *   |                                      |   3 rows
 *   | lo                                hi |   RENDER_CELL_H rows: lo flush left, hi flush right
 *   +--------------------------------------+
 *
 * The bar is as wide as the wider of RENDER_LEGEND_BAR_MIN_W and the label, so the numbers
 * (%.4g: at most RENDER_LEGEND_NUM_CHARS characters each) never overlap. */
#ifndef RENDER_LEGEND_H
#define RENDER_LEGEND_H

#include <stddef.h>
#include <stdint.h>

#include "render_canvas.h"
#include "sim_scenario.h"
#include "render_font.h" /* RENDER_CELL_H of the layout; callers measure their text with it */

#define RENDER_LEGEND_PAD 4        /* font pixels between the panel's edge and its contents */
#define RENDER_LEGEND_BAR_H 10     /* bar height in font pixels */
#define RENDER_LEGEND_BAR_MIN_W 136 /* two numbers of NUM_CHARS side by side, one blank apart */
#define RENDER_LEGEND_NUM_CHARS 11 /* longest %.4g of a double: "-1.234e+308" */
#define RENDER_LEGEND_MARGIN 6     /* font pixels between a stamped legend and the frame edge */

/* The label that says what a legend shows, written into buf (n bytes, always terminated,
 * shortened when n is too small): "<what>  fixed: output.range_max" when range_max > 0, else
 * "<what>  auto: range in view" when in_view (the viewer colours by the [min, max] of the cells on
 * screen) or "<what>  auto: frame max" (frames: [0, the largest field value]). what names the
 * values: "field", or "horizon sums r=8" (the viewer's horizon layer, always automatic: its
 * caller passes range_max 0). Frames and the viewer both call this, so that they say the same
 * thing the same way. */
void render_legend_label(char *buf, size_t n, const char *what, float range_max, int in_view);

/* What the viewer's horizon layer shows, for its label, written into buf (n bytes, always
 * terminated): "horizon sums r=R", R the radius those sums use: agents.radius, or for a scenario
 * with [species.NAME] sections the first species' radius (a model engine's region sums are the
 * output field's disk sums at that radius; sim_backend.h). With `agent` set, the wording of an
 * agent's nine sums in the viewer's panel: the same for a plain scenario, "NAME scores r=R" for
 * the first species of a named one (a model engine's horizon op gives its scores). */
void render_horizon_what(char *buf, size_t n, const sim_scenario *sc, int agent);

/* The size in pixels of the legend of `label` at `scale` (>= 1; smaller counts as 1): the panel
 * the functions below draw, padding included. Depends only on the label and the scale, not on
 * the numbers, so a caller can place it before it knows them. */
void render_legend_size(const char *label, int scale, int *w, int *h);

/* Draws the legend with its panel's upper-left corner at (x, y), clipped to the canvas: the panel
 * (black at alpha 200, blended over what is there), the label and the numbers in light grey, and
 * the bar, whose pixel column i (0 .. bar_w-1) is LUT entry floor(i * 256 / bar_w) with its
 * RGB and alpha 255 (the bar is opaque whatever the table's alpha). lo and hi are the values of
 * entries 0 and 255, printed with %.4g under the bar's ends. Writes nothing outside
 * [x, x+w) x [y, y+h) of render_legend_size. Never fails; allocates nothing. */
void render_legend_draw(render_canvas *c, int x, int y, const uint8_t lut[256 * 4], double lo,
                        double hi, const char *label, int scale);

/* Where render_legend_stamp draws in a w x h frame: 1 and the rectangle (*x, *y, *lw, *lh), or
 * 0 (rectangle zeroed) when the legend does not fit. The rule: the scale is 2 for frames at
 * least 1000 pixels wide, else 1; the legend sits in the bottom-right corner with a margin of
 * RENDER_LEGEND_MARGIN * scale pixels to the right and below; when legend + a margin on each
 * side is wider or taller than the frame, the next smaller scale is tried, and below scale 1
 * nothing is drawn. */
int render_legend_place(const char *label, int w, int h, int *x, int *y, int *lw, int *lh);

/* Draws the legend into a w x h RGBA frame (row-major, w*4 bytes a row) at the place of
 * render_legend_place, or leaves the frame untouched when it does not fit. Over a frame whose
 * alpha is 255 everywhere (every composed frame) the alpha stays 255: the panel blends, the
 * bar and the text are opaque. Pixels outside the legend's rectangle are never written. */
void render_legend_stamp(uint8_t *rgba, int w, int h, const uint8_t lut[256 * 4], double lo,
                         double hi, const char *label);

#endif
