/* sim_field_stats.c - the loops of a field's statistics (sim_field_stats.h). */
#include "sim_field_stats.h"

#include <math.h>
#include <string.h>

#include "sim_clones.h"
#include "sim_rules.h"

/* The loops below are static, called through the plain functions after them: clang 14 gives a
 * target_clones function with external linkage no symbol of its own name, so other files could
 * not call it (GCC and newer clang do). */

/* A row at a time over the columns, whose additions are independent and go side by side in
 * vector registers (a column at a time, each addition waited for the one before it and read a
 * new cache line). */
SIM_CLONES static void column_sums(const float *restrict field, int w, int y0, int y1, int x0,
                                   int x1, double *restrict colsum)
{
    for (int y = y0; y < y1; y++) {
        const float *restrict row = field + (int64_t)y * w;
        for (int x = x0; x < x1; x++)
            colsum[x] += (double)row[x];
    }
}

/* The cell index times the constant stepped by additions, and no branch, so that the compiler
 * hashes several cells in one register. */
SIM_CLONES static uint64_t cell_terms(const float *restrict field, int64_t c0, int64_t c1,
                                      uint64_t base)
{
    uint64_t sum = 0;
    for (int64_t i = c0; i < c1; i++) {
        uint32_t bits;
        memcpy(&bits, &field[i], sizeof bits);
        sum += sim_checksum_cell_scaled((base + (uint64_t)i) * SIM_CHECKSUM_GOLDEN, bits);
    }
    return sum;
}

/* `x > m ? x : m` in 64 lanes side by side (four chains of 16, so that each comparison does not
 * wait for the one before it), on sim_v16f (the compiler left the same loop on an array of lanes
 * scalar), then taken lane by lane. Any order gives the same value. */
SIM_CLONES static float cells_max(const float *restrict field, int64_t c0, int64_t c1)
{
    sim_v16f lane[4];
    for (int k = 0; k < 16; k++)
        lane[0][k] = -INFINITY;
    lane[1] = lane[2] = lane[3] = lane[0];
    int64_t i = c0;
    for (; i + 64 <= c1; i += 64)
        for (int q = 0; q < 4; q++) {
            sim_v16f x;
            memcpy(&x, &field[i + 16 * q], sizeof x);
            sim_v16f_max_into(&lane[q], &x);
        }
    sim_v16f_max_into(&lane[0], &lane[1]);
    sim_v16f_max_into(&lane[2], &lane[3]);
    sim_v16f_max_into(&lane[0], &lane[2]);
    float mx = -INFINITY;
    for (int k = 0; k < 16; k++)
        if (lane[0][k] > mx)
            mx = lane[0][k];
    for (; i < c1; i++)
        if (field[i] > mx)
            mx = field[i];
    return mx;
}

/* column_sums over all columns, with the magnitudes' keys of the same cells: the additions, a
 * max and a min side by side in vector registers. */
SIM_CLONES static void column_sums_mags(const float *restrict field, int w, int y0, int y1,
                                        double *restrict part, uint32_t *hi2, uint32_t *lo2)
{
    uint32_t hi = *hi2, lo = *lo2;
    for (int y = y0; y < y1; y++) {
        const float *restrict row = field + (int64_t)y * w;
        for (int x = 0; x < w; x++) {
            uint32_t bits;
            memcpy(&bits, &row[x], sizeof bits);
            const uint32_t k = bits + bits;
            hi = k > hi ? k : hi;
            lo = k - 2u < lo ? k - 2u : lo;
            part[x] += (double)row[x];
        }
    }
    *hi2 = hi;
    *lo2 = lo;
}

void sim_column_sums_mags(const float *field, int w, int y0, int y1, double *part, uint32_t *hi2,
                          uint32_t *lo2)
{
    column_sums_mags(field, w, y0, y1, part, hi2, lo2);
}

int sim_mags_exact(uint32_t hi2, uint32_t lo2, int h)
{
    return sim_colsum_exact(sim_mag_hi_of_keys(hi2), sim_mag_lo_of_keys(lo2), h);
}

void sim_column_sums(const float *field, int w, int y0, int y1, int x0, int x1, double *colsum)
{
    column_sums(field, w, y0, y1, x0, x1, colsum);
}

void sim_cells_stats(const float *field, int64_t c0, int64_t c1, uint64_t base, float *mx,
                     uint64_t *sum)
{
    const float m = cells_max(field, c0, c1);
    *mx = m > *mx ? m : *mx;
    *sum += cell_terms(field, c0, c1, base);
}

/* Rows a block of the one-thread statistics: about 32 KB of the field, which the column sums,
 * the maximum and the hashing then read from the first-level cache. */
#define STATS_BLOCK_FLOATS 8192

void sim_column_share(int w, int k, int nt, int *x0, int *x1)
{
    *x0 = k == 0 ? 0 : (int)((int64_t)w * k / nt) & ~7;
    *x1 = k == nt - 1 ? w : (int)((int64_t)w * (k + 1) / nt) & ~7;
}

void sim_field_share(const float *field, int w, int h, uint64_t base, int k, int nt,
                     double *colsum, float *mx, uint64_t *sum)
{
    if (nt == 1) {
        for (int x = 0; x < w; x++)
            colsum[x] = 0.0;
        const int rows = w < STATS_BLOCK_FLOATS ? STATS_BLOCK_FLOATS / w : 1;
        for (int y0 = 0; y0 < h; y0 += rows) {
            const int y1 = h - y0 < rows ? h : y0 + rows;
            column_sums(field, w, y0, y1, 0, w, colsum);
            sim_cells_stats(field, (int64_t)y0 * w, (int64_t)y1 * w, base, mx, sum);
        }
        return;
    }
    int x0, x1;
    sim_column_share(w, k, nt, &x0, &x1);
    for (int x = x0; x < x1; x++)
        colsum[x] = 0.0;
    column_sums(field, w, 0, h, x0, x1, colsum);
    const int64_t cells = (int64_t)w * h;
    sim_cells_stats(field, cells * k / nt, cells * (k + 1) / nt, base, mx, sum);
}

double sim_column_total(const double *colsum, int w)
{
    double total = 0.0;
    for (int x = 0; x < w; x++)
        total += colsum[x];
    return total;
}

float sim_max_zero_sign(const float *field, int64_t cells, float mx)
{
    if (mx != 0.0f)
        return mx;
    for (int64_t i = 0; i < cells; i++) {
        uint32_t bits;
        memcpy(&bits, &field[i], sizeof bits);
        if (bits == 0u)
            return 0.0f;
    }
    return -0.0f;
}
