/* sim_view.c - host frame composition with the per-pixel rule of sim_view.h: the reference that
 * the CUDA compose path (gpu/gpu_view.cu) matches pixel for pixel. It lives in sim/, below the
 * renderer, so that sim_compose can draw for a backend without a compose op; render_frame.h
 * keeps its names for the viewer's host frames. */
#include "sim_view.h"

#include <math.h>
#include <string.h>

void sim_view_occupancy(const uint32_t *agents, int64_t n, uint8_t *occ, int64_t cells)
{
    if (cells > 0)
        memset(occ, 0, (size_t)cells);
    for (int64_t i = 0; i < n; i++)
        if ((int64_t)agents[i] < cells)
            occ[agents[i]] = 1;
}

float sim_view_field_max(const float *field, int64_t cells)
{
    /* max is order-independent once NaN is skipped, so the parallel reduction is exact. */
    float m = -INFINITY;
#pragma omp parallel for reduction(max : m) schedule(static)
    for (int64_t i = 0; i < cells; i++) {
        float f = field[i];
        if (f > m)
            m = f; /* a NaN compares false and is skipped */
    }
    return m == -INFINITY ? 0.0f : m;
}

/* Copies one RGBA colour. */
static void put(uint8_t *dst, const uint8_t *rgba)
{
    memcpy(dst, rgba, 4);
}

void sim_view_compose(const sim_view *v, const float *field, int fw, int fh, const uint8_t *occ,
                      float field_max, uint8_t *rgba)
{
    int layer = v->layer;
    int draw_field = layer != SIM_LAYER_AGENTS && field != NULL;
    int draw_agents = (layer == SIM_LAYER_FIELD_AGENTS || layer == SIM_LAYER_AGENTS) && occ;
    /* One inv per frame, computed exactly as the GPU path computes it. */
    float inv = sim_view_inv(v->range_max, field_max);
    int w = v->w, h = v->h;

    /* Rows are independent and each pixel's bytes depend on its cell alone: the same image for
     * any thread count. */
#pragma omp parallel for schedule(static)
    for (int py = 0; py < h; py++) {
        uint8_t *row = rgba + (size_t)py * (size_t)w * 4;
        int y = sim_view_sample(v->y0, v->scale, py, fh);
        for (int px = 0; px < w; px++) {
            uint8_t *dst = row + (size_t)px * 4;
            int x = y < 0 ? -1 : sim_view_sample(v->x0, v->scale, px, fw);
            if (x < 0) {
                put(dst, v->background_rgba);
                continue;
            }
            size_t cell = (size_t)y * (size_t)fw + (size_t)x;
            uint8_t o = draw_agents ? occ[cell] : 0;
            if (o)
                put(dst, o == 2 ? v->moved_rgba : o >= 3 && o <= 5 ? v->species_rgba[o - 3]
                                                                    : v->agent_rgba);
            else if (draw_field)
                put(dst, v->lut + 4 * sim_view_index(field[cell], inv));
            else if (layer == SIM_LAYER_AGENTS)
                put(dst, v->background_rgba);
            else
                put(dst, v->lut); /* a field layer without a field: the colormap's low end */
        }
    }
}
