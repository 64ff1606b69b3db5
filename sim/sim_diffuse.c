/* sim_diffuse.c - the CPU Jacobi sweep (5-point, three boundary kinds) and decay.
 * Rows are independent given src, so OpenMP over rows cannot change the result. */
#include "sim_diffuse.h"

#include <math.h>

#include "sim_rules.h"

float sim_diffuse_sweep(const sim_scenario *sc, const float *src, float *dst, int want_residual)
{
    const int w = sc->width, h = sc->height, b = sc->boundary;
    const float a = sc->diffusion, om = 1.0f - sc->diffusion;
    float residual = 0.0f;

#pragma omp parallel for schedule(static) reduction(max : residual)
    for (int y = 0; y < h; y++) {
        const float *cur = src + (int64_t)y * w;
        float *out = dst + (int64_t)y * w;
        /* The rows above and below; NULL means "the fixed ghost value". Wall mirrors the cell
         * itself, which is the current row. */
        const float *up, *down;
        if (b == SIM_BOUNDARY_PERIODIC) {
            up = src + (int64_t)((y + h - 1) % h) * w;
            down = src + (int64_t)((y + 1) % h) * w;
        } else {
            up = y > 0 ? cur - w : (b == SIM_BOUNDARY_WALL ? cur : NULL);
            down = y < h - 1 ? cur + w : (b == SIM_BOUNDARY_WALL ? cur : NULL);
        }
        float local = 0.0f;
        for (int x = 0; x < w; x++) {
            float c = cur[x];
            float n = up ? up[x] : sc->fixed_top;
            float s = down ? down[x] : sc->fixed_bottom;
            float west, east;
            if (x > 0)
                west = cur[x - 1];
            else
                west = b == SIM_BOUNDARY_PERIODIC ? cur[w - 1]
                       : b == SIM_BOUNDARY_WALL   ? c
                                                  : sc->fixed_left;
            if (x < w - 1)
                east = cur[x + 1];
            else
                east = b == SIM_BOUNDARY_PERIODIC ? cur[0]
                       : b == SIM_BOUNDARY_WALL   ? c
                                                  : sc->fixed_right;
            float v = sim_jacobi(c, n, s, east, west, a, om);
            out[x] = v;
            if (want_residual) {
                float d = fabsf(v - c);
                if (d > local)
                    local = d;
            }
        }
        if (local > residual)
            residual = local;
    }
    return residual;
}

void sim_diffuse_decay(const sim_scenario *sc, float *field)
{
    const float keep = 1.0f - sc->decay;
    const int64_t cells = (int64_t)sc->width * sc->height;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < cells; i++)
        field[i] = field[i] * keep;
}
