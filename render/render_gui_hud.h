/* render_gui_hud.h - the viewer's overlays on the renderer: text panels (HUD, inspect panel,
 * parameters, help, status line), the live plot and the colour bar, each drawn in software
 * (render_canvas, render_font) into its own blended streaming texture and redrawn only when its
 * content changes; plus marks on the world (an outlined cell, a trail). Laid out in view pixels
 * and scaled to the renderer's output. Knows nothing of the simulation or the app: callers pass
 * the text and data to show. */
#ifndef RENDER_GUI_HUD_H
#define RENDER_GUI_HUD_H

#include <SDL.h>
#include <stddef.h>
#include <stdint.h>

#include "render_canvas.h"
#include "render_gui_plot.h"
#include "sim_view.h"

enum {
    RENDER_GUI_OV_HUD,
    RENDER_GUI_OV_PLOT,
    RENDER_GUI_OV_INSPECT,
    RENDER_GUI_OV_PARAMS,
    RENDER_GUI_OV_LEGEND,
    RENDER_GUI_OV_HELP,
    RENDER_GUI_OV_STATUS,
    RENDER_GUI_OV_COUNT
};

typedef struct render_gui_hud render_gui_hud;

/* A rectangle in view pixels. */
typedef struct render_gui_rect {
    int x, y, w, h;
} render_gui_rect;

int render_gui_hud_create(SDL_Renderer *ren, render_gui_hud **out);
void render_gui_hud_destroy(render_gui_hud *h); /* NULL is a no-op */

/* The view size the overlays are laid out in (call once per frame before drawing). */
void render_gui_hud_layout(render_gui_hud *h, int view_w, int view_h);

/* A panel sized to text (lines split at '\n'; line k in cols[k] when k < n_cols, else light
 * ink) with a margin, at (x, y); negative x or y count from the right or bottom edge. Returns
 * where it went (for hit tests). */
render_gui_rect render_gui_hud_text(render_gui_hud *h, int slot, const char *text, int x, int y,
                                    int scale, const render_rgba *cols, int n_cols);

/* The live plot of the statistics in mask, w x h at (x, y); redrawn when serial or mask
 * change. */
void render_gui_hud_plot(render_gui_hud *h, render_gui_plot *p, uint64_t serial,
                         unsigned mask, int x, int y, int scale);

/* The colour bar of lut over [lo, hi] with its label, at (x, y) (negative: from the right or
 * bottom edge). */
void render_gui_hud_legend(render_gui_hud *h, const uint8_t *lut, double lo, double hi,
                           const char *label, int x, int y, int scale);

/* Outlines cell (cx, cy) of the view, at least `min` pixels wide (a cell is smaller when
 * zoomed out), with `thick` nested outlines. */
void render_gui_hud_cell_box(render_gui_hud *h, const sim_view *v, int cx, int cy, int min,
                             int thick, render_rgba col);

/* A polyline through the centres of n cells (xs[i], ys[i]), oldest first, fading from dim to
 * col; segments longer than one cell (a wrap across a periodic edge) are skipped. */
void render_gui_hud_trail(render_gui_hud *h, const sim_view *v, const int *xs, const int *ys,
                          int n, render_rgba col);

/* The simulation's pace as the HUD shows it: "12.5 steps/s", or seconds per step when slower
 * than one step a second ("5.2 s/step"; "0.1 steps/s" told a user nothing). */
void render_gui_hud_rate(char *buf, size_t n, double steps_per_s);

#endif
