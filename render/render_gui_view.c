/* render_gui_view.c - the viewer's camera: zoom, pan, resize and pixel <-> cell mapping. */
#include "render_gui_view.h"

#include <math.h>

void render_gui_view_world(const sim_view *v, double sx, double sy, double *wx, double *wy)
{
    *wx = v->x0 + sx * v->scale;
    *wy = v->y0 + sy * v->scale;
}

void render_gui_view_zoom(sim_view *v, double factor, double sx, double sy, double min_scale,
                          double max_scale)
{
    if (!(factor > 0.0))
        return;
    double wx, wy;
    render_gui_view_world(v, sx, sy, &wx, &wy);
    double s = v->scale / factor;
    if (s < min_scale)
        s = min_scale;
    if (s > max_scale)
        s = max_scale;
    v->scale = s;
    /* Solve x0 + sx*s = wx for the new origin. */
    v->x0 = wx - sx * s;
    v->y0 = wy - sy * s;
}

void render_gui_view_pan(sim_view *v, double dx, double dy)
{
    v->x0 -= dx * v->scale;
    v->y0 -= dy * v->scale;
}

void render_gui_view_resize(sim_view *v, int w, int h)
{
    if (w < 1)
        w = 1;
    if (h < 1)
        h = 1;
    double cx, cy;
    render_gui_view_world(v, 0.5 * v->w, 0.5 * v->h, &cx, &cy);
    v->w = w;
    v->h = h;
    v->x0 = cx - 0.5 * w * v->scale;
    v->y0 = cy - 0.5 * h * v->scale;
}

int render_gui_view_cell(const sim_view *v, int px, int py, int fw, int fh, int *cx, int *cy)
{
    if (px < 0 || py < 0 || px >= v->w || py >= v->h)
        return 0;
    int x = sim_view_sample(v->x0, v->scale, px, fw);
    int y = sim_view_sample(v->y0, v->scale, py, fh);
    if (x < 0 || y < 0)
        return 0;
    *cx = x;
    *cy = y;
    return 1;
}

/* The pixels p with floor(origin + (p+0.5)*scale) == c, i.e. c <= origin + (p+0.5)*scale < c+1:
 * p in [(c - origin)/scale - 0.5, (c + 1 - origin)/scale - 0.5). Estimated in floating point,
 * then nudged so that the exact sampling rule decides the two ends. */
static void span(double origin, double scale, int c, int *p0, int *n)
{
    int a = (int)ceil((c - origin) / scale - 0.5) - 1;
    while (floor(origin + (a + 0.5) * scale) < c)
        a++;
    while (floor(origin + (a - 0.5) * scale) >= c)
        a--;
    int b = a;
    while (floor(origin + (b + 0.5) * scale) <= c)
        b++;
    *p0 = a;
    *n = b - a;
    if (floor(origin + (a + 0.5) * scale) != c)
        *n = 0;
}

void render_gui_view_cell_rect(const sim_view *v, int cx, int cy, int *x, int *y, int *w,
                               int *h)
{
    span(v->x0, v->scale, cx, x, w);
    span(v->y0, v->scale, cy, y, h);
}

void render_gui_view_limits(const sim_view *v, int fw, int fh, double *min_scale,
                            double *max_scale)
{
    double fit_x = (double)fw / (v->w > 0 ? v->w : 1);
    double fit_y = (double)fh / (v->h > 0 ? v->h : 1);
    double fit = fit_x > fit_y ? fit_x : fit_y;
    *min_scale = 1.0 / RENDER_GUI_ZOOM_MAX;
    *max_scale = 4.0 * fit;
    if (*max_scale < 1.0)
        *max_scale = 1.0; /* a tiny world may still be zoomed out to one pixel per cell */
}
