/* render_gui_layer.c - the horizon-sum layer for the sampled cells of a view.
 *
 * The distinct sampled columns xs[] and rows ys[] (increasing with the pixel index) define an
 * nx x ny grid of cells; the backend sums exactly those (sim_region_sums), and every pixel takes
 * the colour of its sample. */
#include "render_gui_layer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct render_gui_layer {
    int *px_ix, *py_iy;    /* per pixel: index into xs / ys, -1 for background */
    int32_t *xs, *ys;      /* distinct sampled cells */
    int64_t *sums;         /* nx * ny fixed-point disk sums */
    float *units;          /* the same in field units */
    size_t cap_w, cap_h, cap_sums, cap_units;
};

int render_gui_layer_create(render_gui_layer **out, sim_err *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? SIM_OK : sim_err_set(err, SIM_ENOMEM, "out of memory for the horizon layer");
}

void render_gui_layer_destroy(render_gui_layer *l)
{
    if (!l)
        return;
    free(l->px_ix);
    free(l->py_iy);
    free(l->xs);
    free(l->ys);
    free(l->sums);
    free(l->units);
    free(l);
}

/* Grows *p to hold n elements of size sz; keeps the old block on failure. */
static int grow(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n <= *cap)
        return 1;
    void *q = realloc(*p, n * sz);
    if (!q)
        return 0;
    *p = q;
    *cap = n;
    return 1;
}

/* Distinct samples along one axis: ix[p] = index of pixel p's cell in cells[], or -1. */
static int axis(double origin, double scale, int npx, int n, int *ix, int32_t *cells)
{
    int k = 0;
    for (int p = 0; p < npx; p++) {
        int c = sim_view_sample(origin, scale, p, n);
        if (c < 0) {
            ix[p] = -1;
            continue;
        }
        if (k == 0 || cells[k - 1] != c)
            cells[k++] = c;
        ix[p] = k - 1;
    }
    return k;
}

int render_gui_layer_draw(render_gui_layer *l, sim *s, const sim_view *v, uint8_t *rgba,
                          float *vis_min, float *vis_max, sim_err *err)
{
    const sim_scenario *sc = sim_get_scenario(s);
    int w = v->w, h = v->h;
    size_t cw = (size_t)(w > 0 ? w : 1), ch = (size_t)(h > 0 ? h : 1);
    size_t cap_w = l->cap_w, cap_h = l->cap_h;
    if (!grow((void **)&l->px_ix, &cap_w, cw, sizeof(int)) ||
        !grow((void **)&l->xs, &l->cap_w, cw, sizeof(int32_t)) ||
        !grow((void **)&l->py_iy, &cap_h, ch, sizeof(int)) ||
        !grow((void **)&l->ys, &l->cap_h, ch, sizeof(int32_t)))
        return sim_err_set(err, SIM_ENOMEM, "out of memory for the horizon layer");
    int nx = axis(v->x0, v->scale, w, sc->width, l->px_ix, l->xs);
    int ny = axis(v->y0, v->scale, h, sc->height, l->py_iy, l->ys);

    float vmin = 0.0f, vmax = 0.0f;
    float *sums = NULL;
    if (nx > 0 && ny > 0) {
        size_t n = (size_t)nx * (size_t)ny;
        if (!grow((void **)&l->sums, &l->cap_sums, n, sizeof(int64_t)) ||
            !grow((void **)&l->units, &l->cap_units, n, sizeof(float)))
            return sim_err_set(err, SIM_ENOMEM, "out of memory for the horizon layer");
        if (sim_region_sums(s, l->xs, nx, l->ys, ny, l->sums) != SIM_OK)
            return sim_err_set(err, SIM_EDEVICE, "horizon layer: %s", sim_errmsg(s));
        sums = l->units;
        float lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            float f = (float)((double)l->sums[i] / (double)SIM_FIX_ONE);
            sums[i] = f;
            lo = f < lo ? f : lo;
            hi = f > hi ? f : hi;
        }
        vmin = lo;
        vmax = hi;
    }

    /* Colour every pixel from its sample, by the index rule of frame composition applied to
     * the sum minus the smallest in view: sums vary little next to their size (a disk of
     * smooth field), so the colormap spans the visible range rather than 0 .. max. */
    float inv = sim_view_inv(0.0f, SIM_FSUB(vmax, vmin));
    for (int py = 0; py < h; py++) {
        uint8_t *dst = rgba + (size_t)py * (size_t)w * 4;
        int iy = l->py_iy[py];
        for (int px = 0; px < w; px++, dst += 4) {
            int ix = l->px_ix[px];
            if (iy < 0 || ix < 0 || !sums)
                memcpy(dst, v->background_rgba, 4);
            else
                memcpy(dst,
                       v->lut + 4 * sim_view_index(SIM_FSUB(sums[(size_t)iy * nx + ix], vmin),
                                                   inv),
                       4);
        }
    }
    if (vis_min)
        *vis_min = vmin;
    if (vis_max)
        *vis_max = vmax;
    return SIM_OK;
}
