/* render_gui_layer.c - the horizon-sum layer on the host for the sampled cells of a view.
 *
 * The distinct sampled columns xs[] and rows ys[] (monotone in the pixel index) define an
 * nx x ny grid of cells to evaluate. For each sampled row y and each disk row dy, a prefix sum of
 * source row y+dy over columns [xs_min - r, xs_max + r] turns every segment of the disk into
 * two lookups. Rows are independent, so they are spread over OpenMP threads, each with its own
 * prefix buffer. */
#include "render_gui_layer.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sim_horizon.h"
#include "sim_rules.h"
#include "sim_scenario.h"

struct render_gui_layer {
    int *px_ix, *py_iy;  /* per pixel: index into xs / ys, -1 for background */
    int *xs, *ys;        /* distinct sampled cells */
    float *sums;         /* nx * ny disk sums in field units */
    int64_t *prefix;     /* threads * (span + 1) */
    int64_t *acc;        /* threads * nx: the sums of one sampled row */
    size_t cap_w, cap_h, cap_sums, cap_prefix, cap_acc;
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
    free(l->prefix);
    free(l->acc);
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
static int axis(double origin, double scale, int npx, int n, int *ix, int *cells)
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

static int wrap(int v, int n)
{
    v %= n;
    return v < 0 ? v + n : v;
}

int render_gui_layer_horizon(render_gui_layer *l, const sim_view *v, const float *field,
                             int fw, int fh, int periodic, int r, uint8_t *rgba, float *vis_min,
                             float *vis_max, sim_err *err)
{
    int w = v->w, h = v->h;
    size_t cw = (size_t)(w > 0 ? w : 1), ch = (size_t)(h > 0 ? h : 1);
    size_t cap_w = l->cap_w, cap_h = l->cap_h;
    if (!grow((void **)&l->px_ix, &cap_w, cw, sizeof(int)) ||
        !grow((void **)&l->xs, &l->cap_w, cw, sizeof(int)) ||
        !grow((void **)&l->py_iy, &cap_h, ch, sizeof(int)) ||
        !grow((void **)&l->ys, &l->cap_h, ch, sizeof(int)))
        return sim_err_set(err, SIM_ENOMEM, "out of memory for the horizon layer");
    int nx = axis(v->x0, v->scale, w, fw, l->px_ix, l->xs);
    int ny = axis(v->y0, v->scale, h, fh, l->py_iy, l->ys);
    if (r < 0)
        r = 0;
    if (r > SIM_MAX_RADIUS)
        r = SIM_MAX_RADIUS;

    float vmin = 0.0f, vmax = 0.0f;
    if (nx > 0 && ny > 0) {
        int x_lo = l->xs[0] - r, span = l->xs[nx - 1] + r - x_lo + 1;
        int threads = omp_get_max_threads();
        if (!grow((void **)&l->sums, &l->cap_sums, (size_t)nx * (size_t)ny, sizeof(float)) ||
            !grow((void **)&l->prefix, &l->cap_prefix, (size_t)threads * ((size_t)span + 1),
                  sizeof(int64_t)) ||
            !grow((void **)&l->acc, &l->cap_acc, (size_t)threads * (size_t)nx, sizeof(int64_t)))
            return sim_err_set(err, SIM_ENOMEM, "out of memory for the horizon layer");
        sim_disk disk;
        sim_disk_init(&disk, r);
        float lo = INFINITY, hi = -INFINITY;
#pragma omp parallel num_threads(threads) reduction(min : lo) reduction(max : hi)
        {
            int64_t *pre = l->prefix + (size_t)omp_get_thread_num() * ((size_t)span + 1);
            int64_t *acc = l->acc + (size_t)omp_get_thread_num() * (size_t)nx;
#pragma omp for schedule(dynamic, 4)
            for (int iy = 0; iy < ny; iy++) {
                memset(acc, 0, (size_t)nx * sizeof *acc);
                for (int dy = -r; dy <= r; dy++) {
                    int yy = l->ys[iy] + dy;
                    if (periodic)
                        yy = wrap(yy, fh);
                    else if (yy < 0 || yy >= fh)
                        continue;
                    const float *row = field + (size_t)yy * (size_t)fw;
                    pre[0] = 0;
                    for (int j = 0; j < span; j++) {
                        int xx = x_lo + j;
                        int64_t c = 0;
                        if (periodic)
                            c = sim_fix(row[wrap(xx, fw)]);
                        else if (xx >= 0 && xx < fw)
                            c = sim_fix(row[xx]);
                        pre[j + 1] = pre[j] + c;
                    }
                    int hw = disk.hw[dy + r];
                    for (int ix = 0; ix < nx; ix++) {
                        int a = l->xs[ix] - hw - x_lo; /* >= 0 because hw <= r */
                        acc[ix] += pre[a + 2 * hw + 1] - pre[a];
                    }
                }
                float *out = l->sums + (size_t)iy * (size_t)nx;
                for (int ix = 0; ix < nx; ix++) {
                    out[ix] = (float)((double)acc[ix] / (double)SIM_FIX_ONE);
                    lo = out[ix] < lo ? out[ix] : lo;
                    hi = out[ix] > hi ? out[ix] : hi;
                }
            }
        }
        vmin = lo;
        vmax = hi;
    }

    /* Colour every pixel from its sample, by the index rule of frame composition applied to
     * the sum minus the smallest in view: sums vary little next to their size (a disk of
     * smooth field), so the colormap spans the visible range rather than 0 .. max. */
    float inv = sim_view_inv(0.0f, SIM_FSUB(vmax, vmin));
    const float *sums = l->sums;
#pragma omp parallel for schedule(static)
    for (int py = 0; py < h; py++) {
        uint8_t *dst = rgba + (size_t)py * (size_t)w * 4;
        int iy = l->py_iy[py];
        for (int px = 0; px < w; px++, dst += 4) {
            int ix = l->px_ix[px];
            if (iy < 0 || ix < 0)
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
