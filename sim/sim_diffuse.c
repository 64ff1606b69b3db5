/* sim_diffuse.c - the CPU Jacobi sweep (5-point, three boundary kinds) and decay.
 * Rows are independent given src, so OpenMP over rows cannot change the result.
 *
 * Each row is one pass over its interior columns 1 .. w-2, written without branches so that the
 * compiler vectorises it (the same float operations in the same order per cell as sim_jacobi:
 * vectorising changes which cells run together, never a cell's bits), compiled for AVX-512,
 * AVX2 and the baseline (SIM_CLONES; the baseline's 4-float vectors left the one-thread step
 * ~14% slower at 64^2, 512^2 and 2048^2), and the two edge columns apart. The residual is kept
 * per lane and reduced at the end: a maximum is the same value in any order (every |v - c| is
 * >= +0; a NaN loses every comparison, as in the plain loop). */
#include "sim_diffuse.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#include "sim_clones.h"
#include "sim_rules.h"

/* Lanes of the residual: enough for one AVX-512 register of floats. */
#define RES_LANES 16
_Static_assert(RES_LANES * sizeof(float) == sizeof(sim_v16f), "a lane of sim_v16f for each");

/* The edge cell x (0 or w-1) of a row, by sim_jacobi with the boundary's west/east rule. */
static float edge_cell(const sim_scenario *sc, const float *cur, float n, float s, int x, int w,
                       float a, float om)
{
    const int b = sc->boundary;
    float c = cur[x];
    float west, east;
    if (x > 0)
        west = cur[x - 1];
    else
        west = b == SIM_BOUNDARY_PERIODIC ? cur[w - 1] : b == SIM_BOUNDARY_WALL ? c : sc->fixed_left;
    if (x < w - 1)
        east = cur[x + 1];
    else
        east = b == SIM_BOUNDARY_PERIODIC ? cur[0] : b == SIM_BOUNDARY_WALL ? c : sc->fixed_right;
    return sim_jacobi(c, n, s, east, west, a, om);
}

/* Cells x .. x + 15 of interior with the residual: |v - c| of each into the lanes' maxima r. */
static inline void interior16(float *restrict out, const float *restrict cur,
                              const float *restrict up, const float *restrict down, int x,
                              float a, float om, float keep, int decay, sim_v16f *r)
{
    float d16[16];
    for (int j = 0; j < 16; j++) {
        const float c = cur[x + j];
        const float v =
            sim_jacobi(c, up[x + j], down[x + j], cur[x + j + 1], cur[x + j - 1], a, om);
        d16[j] = fabsf(v - c);
        out[x + j] = decay ? v * keep : v;
    }
    sim_v16f d;
    memcpy(&d, d16, sizeof d);
    sim_v16f_max_into(r, &d);
}

/* out[x] for x in [1, w-1) with north/south rows up/down; the body the compiler vectorises.
 * keep != 1 multiplies by keep afterwards (decay fused into the last sweep; the residual is
 * taken before it, as a separate decay pass would). */
SIM_CLONES static void interior(float *restrict out, const float *restrict cur,
                                const float *restrict up, const float *restrict down, int w,
                                float a, float om, float keep, int decay, float *restrict res)
{
    if (res) {
        /* 16 cells at a time, the lanes' residual on sim_v16f in a register (kept in res, the
         * loop read and wrote it through memory every 16 cells), then the row's last cells. */
        sim_v16f r;
        memcpy(&r, res, sizeof r);
        int x = 1;
        for (; x + 16 <= w - 1; x += 16)
            interior16(out, cur, up, down, x, a, om, keep, decay, &r);
        /* The row's last cells as the 16 that end at w - 2, some of them again: each is the
         * same value written twice, and a maximum counts a lane twice without harm (the scalar
         * loop below took the last 14 cells of each of the default scenario's rows). */
        if (x < w - 1 && w - 1 - 16 >= 1) {
            interior16(out, cur, up, down, w - 1 - 16, a, om, keep, decay, &r);
            x = w - 1;
        }
        memcpy(res, &r, sizeof r);
        for (; x < w - 1; x++) {
            float c = cur[x];
            float v = sim_jacobi(c, up[x], down[x], cur[x + 1], cur[x - 1], a, om);
            float d = fabsf(v - c);
            res[0] = d > res[0] ? d : res[0];
            out[x] = decay ? v * keep : v;
        }
        return;
    }
    if (decay) {
        for (int x = 1; x < w - 1; x++)
            out[x] = sim_jacobi(cur[x], up[x], down[x], cur[x + 1], cur[x - 1], a, om) * keep;
    } else {
        for (int x = 1; x < w - 1; x++)
            out[x] = sim_jacobi(cur[x], up[x], down[x], cur[x + 1], cur[x - 1], a, om);
    }
}

/* As interior, with a fixed north and/or south value (a fixed boundary's ghost row): up or down
 * NULL stands for the constant. Rare (first and last rows only), so not specialised further. */
static void interior_fixed(float *out, const float *cur, const float *up, const float *down,
                           float nval, float sval, int w, float a, float om, float keep,
                           int decay, float *res)
{
    for (int x = 1; x < w - 1; x++) {
        float c = cur[x];
        float v = sim_jacobi(c, up ? up[x] : nval, down ? down[x] : sval, cur[x + 1], cur[x - 1],
                             a, om);
        if (res) {
            float d = fabsf(v - c);
            res[0] = d > res[0] ? d : res[0];
        }
        out[x] = decay ? v * keep : v;
    }
}

/* One output row out of a sweep, from its row cur and the rows up and down (NULL: the fixed
 * ghost value); returns the row's residual (0 when !want). */
static float sweep_ptrs(const sim_scenario *sc, const float *cur, const float *up,
                        const float *down, float *out, int want, float keep, int decay)
{
    const int w = sc->width;
    const float a = sc->diffusion, om = 1.0f - sc->diffusion;
    float res[RES_LANES];
    for (int j = 0; j < RES_LANES; j++)
        res[j] = 0.0f;
    if (up && down)
        interior(out, cur, up, down, w, a, om, keep, decay, want ? res : NULL);
    else
        interior_fixed(out, cur, up, down, sc->fixed_top, sc->fixed_bottom, w, a, om, keep, decay,
                       want ? res : NULL);
    /* The edge columns (one cell when w == 1). */
    for (int x = 0; x < w; x = x == 0 && w > 1 ? w - 1 : w) {
        float c = cur[x];
        float v = edge_cell(sc, cur, up ? up[x] : sc->fixed_top, down ? down[x] : sc->fixed_bottom,
                            x, w, a, om);
        if (want) {
            float d = fabsf(v - c);
            res[0] = d > res[0] ? d : res[0];
        }
        out[x] = decay ? v * keep : v;
    }
    float local = 0.0f;
    for (int j = 0; j < RES_LANES; j++)
        local = res[j] > local ? res[j] : local;
    return local;
}

/* The rows above and below row y of a sweep: indices, -1 for none (a fixed ghost row, or the
 * row itself for a wall, which the callers turn into pointers). */
static void neighbour_rows(const sim_scenario *sc, int y, int *up, int *down)
{
    const int h = sc->height;
    if (sc->boundary == SIM_BOUNDARY_PERIODIC) {
        *up = y == 0 ? h - 1 : y - 1;
        *down = y == h - 1 ? 0 : y + 1;
    } else {
        *up = y > 0 ? y - 1 : -1;
        *down = y < h - 1 ? y + 1 : -1;
    }
}

/* One output row y of a sweep; returns the row's residual (0 when !want). */
static float sweep_row(const sim_scenario *sc, const float *src, float *dst, int y, int want,
                       float keep, int decay)
{
    const int w = sc->width;
    const float *cur = src + (int64_t)y * w;
    int ku, kd;
    neighbour_rows(sc, y, &ku, &kd);
    /* NULL means "the fixed ghost value"; a wall mirrors the cell itself: the current row. */
    const int wall = sc->boundary == SIM_BOUNDARY_WALL;
    const float *up = ku >= 0 ? src + (int64_t)ku * w : wall ? cur : NULL;
    const float *down = kd >= 0 ? src + (int64_t)kd * w : wall ? cur : NULL;
    return sweep_ptrs(sc, cur, up, down, dst + (int64_t)y * w, want, keep, decay);
}

/* out = row + deposit where occ >= 0, else row: a select, so that it vectorises. */
SIM_CLONES static void deposit_row(const float *restrict row, const int32_t *restrict occ,
                                   int w, float deposit, float *restrict out)
{
    for (int x = 0; x < w; x++)
        out[x] = occ[x] >= 0 ? row[x] + deposit : row[x];
}

float sim_diffuse_sweep_rows_deposit(const sim_scenario *sc, const float *src,
                                     const int32_t *occ, float deposit, float *dst, int y0,
                                     int y1, float *scratch, int want_residual, int decay)
{
    const int w = sc->width;
    const float keep = 1.0f - sc->decay;
    const int wall = sc->boundary == SIM_BOUNDARY_WALL;
    int tag[3] = {-1, -1, -1}; /* the row each scratch row holds */
    float residual = 0.0f;
    for (int y = y0; y < y1; y++) {
        int need[3];
        neighbour_rows(sc, y, &need[0], &need[2]);
        need[1] = y;
        const float *p[3];
        for (int j = 0; j < 3; j++) {
            p[j] = NULL;
            if (need[j] < 0)
                continue;
            int slot = -1;
            for (int k = 0; k < 3; k++)
                if (tag[k] == need[j])
                    slot = k;
            if (slot < 0) {
                /* A slot that holds none of the three rows this output row needs. */
                for (int k = 0; k < 3 && slot < 0; k++)
                    if (tag[k] < 0 ||
                        (tag[k] != need[0] && tag[k] != need[1] && tag[k] != need[2]))
                        slot = k;
                tag[slot] = need[j];
                deposit_row(src + (int64_t)need[j] * w, occ + (int64_t)need[j] * w, w, deposit,
                            scratch + (int64_t)slot * w);
            }
            p[j] = scratch + (int64_t)slot * w;
        }
        const float *up = p[0] ? p[0] : wall ? p[1] : NULL;
        const float *down = p[2] ? p[2] : wall ? p[1] : NULL;
        float local = sweep_ptrs(sc, p[1], up, down, dst + (int64_t)y * w, want_residual, keep,
                                 decay);
        if (local > residual)
            residual = local;
    }
    return residual;
}

float sim_diffuse_sweep_rows(const sim_scenario *sc, const float *src, float *dst, int y0,
                             int y1, int want_residual, int decay)
{
    const float keep = 1.0f - sc->decay;
    float residual = 0.0f;
    for (int y = y0; y < y1; y++) {
        float local = sweep_row(sc, src, dst, y, want_residual, keep, decay);
        if (local > residual)
            residual = local;
    }
    return residual;
}

float sim_diffuse_sweep_ex(const sim_scenario *sc, const float *src, float *dst,
                           int want_residual, int decay, int threads)
{
    const int h = sc->height;
    const float keep = 1.0f - sc->decay;
    if (threads <= 0)
        threads = omp_get_max_threads();
    float residual = 0.0f;
    if (threads == 1 || h == 1) {
        /* No OpenMP call at all: even a region of one thread costs a small world's step a few
         * per cent. */
        for (int y = 0; y < h; y++) {
            float local = sweep_row(sc, src, dst, y, want_residual, keep, decay);
            if (local > residual)
                residual = local;
        }
        return residual;
    }
#pragma omp parallel for schedule(static) num_threads(threads) reduction(max : residual)
    for (int y = 0; y < h; y++) {
        float local = sweep_row(sc, src, dst, y, want_residual, keep, decay);
        if (local > residual)
            residual = local;
    }
    return residual;
}

float sim_diffuse_sweep(const sim_scenario *sc, const float *src, float *dst, int want_residual)
{
    return sim_diffuse_sweep_ex(sc, src, dst, want_residual, 0, 0);
}

void sim_diffuse_decay_ex(const sim_scenario *sc, float *field, int threads)
{
    const float keep = 1.0f - sc->decay;
    const int64_t cells = (int64_t)sc->width * sc->height;
    if (threads <= 0)
        threads = omp_get_max_threads();
    if (threads == 1) {
        for (int64_t i = 0; i < cells; i++)
            field[i] = field[i] * keep;
        return;
    }
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < cells; i++)
        field[i] = field[i] * keep;
}

void sim_diffuse_decay(const sim_scenario *sc, float *field)
{
    sim_diffuse_decay_ex(sc, field, 0);
}
