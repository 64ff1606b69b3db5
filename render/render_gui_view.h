/* render_gui_view.h - the viewer's camera on top of sim_view (sim_view.h): zoom about a screen
 * point, pan by pixels, keep the centre on resize, and map pixels to cells with the same rule
 * the frame composition samples by, so that what is clicked is what is drawn.
 *
 * Screen coordinates are continuous pixels: pixel (px, py) covers [px, px+1) x [py, py+1), and
 * the world point under screen point (sx, sy) is (x0 + sx*scale, y0 + sy*scale) in cells. */
#ifndef RENDER_GUI_VIEW_H
#define RENDER_GUI_VIEW_H

#include "sim_view.h"

/* Most pixels per cell when zoomed in (scale >= 1/RENDER_GUI_ZOOM_MAX cells per pixel). */
#define RENDER_GUI_ZOOM_MAX 64.0

/* The world point (in cells, continuous) under screen point (sx, sy). */
void render_gui_view_world(const sim_view *v, double sx, double sy, double *wx, double *wy);

/* Multiplies the zoom by factor (> 1 zooms in: scale /= factor) keeping the world point under
 * (sx, sy) where it is; the new scale is clamped to [min_scale, max_scale] first. */
void render_gui_view_zoom(sim_view *v, double factor, double sx, double sy, double min_scale,
                          double max_scale);

/* Moves the picture by (dx, dy) screen pixels: what was under (sx, sy) goes to (sx+dx, sy+dy). */
void render_gui_view_pan(sim_view *v, double dx, double dy);

/* Changes the image size to w x h (each >= 1) keeping the scale and the world point at the
 * centre of the image. */
void render_gui_view_resize(sim_view *v, int w, int h);

/* The cell that pixel (px, py) shows in a fw x fh world (sim_view_sample); returns 0 and leaves
 * *cx, *cy alone when the pixel is off the image or shows background. */
int render_gui_view_cell(const sim_view *v, int px, int py, int fw, int fh, int *cx, int *cy);

/* The screen rectangle [*x, *x + *w) x [*y, *y + *h) of pixels that sample cell (cx, cy): the
 * pixels p with floor(origin + (p + 0.5) * scale) == cell. *w or *h is 0 when no pixel samples
 * it (zoomed out past the cell). Not clipped to the image. */
void render_gui_view_cell_rect(const sim_view *v, int cx, int cy, int *x, int *y, int *w,
                               int *h);

/* Zoom limits for a fw x fh world in the view's image: from RENDER_GUI_ZOOM_MAX pixels per cell
 * to a quarter of the size that fits the whole world. */
void render_gui_view_limits(const sim_view *v, int fw, int fh, double *min_scale,
                            double *max_scale);

#endif
