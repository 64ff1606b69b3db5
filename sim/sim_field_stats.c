/* sim_field_stats.c - the loops of a field's statistics (sim_field_stats.h). */
#include "sim_field_stats.h"

#include <math.h>
#include <string.h>

#include "sim_clones.h"
#include "sim_rules.h"

/* The one-pass AVX-512 statistics (sim_rows_stats): x86-64 with GCC or clang, picked at run
 * time where the processor has AVX-512F. */
#if defined(__x86_64__) && defined(__GNUC__)
#define SIM_AVX512_ROWS 1
#include <immintrin.h>
#else
#define SIM_AVX512_ROWS 0
#endif

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

/* The maximum and the checksum terms of cells c0 .. c1 - 1 into *mx and *sum, as
 * sim_rows_stats's. */
static void cells_stats(const float *field, int64_t c0, int64_t c1, uint64_t base, float *mx,
                        uint64_t *sum)
{
    const float m = cells_max(field, c0, c1);
    *mx = m > *mx ? m : *mx;
    *sum += cell_terms(field, c0, c1, base);
}

int sim_mags_exact(uint32_t hi2, uint32_t lo2, int h)
{
    return sim_colsum_exact(sim_mag_hi_of_keys(hi2), sim_mag_lo_of_keys(lo2), h);
}

#if SIM_AVX512_ROWS
/* Element k's bit of a 16-lane mask at each even (odd: shift m right once first) position, as
 * the mask of the 8 64-bit lanes whose low (high) halves hold those elements. */
static unsigned even_elements(unsigned m)
{
    unsigned r = 0;
    for (int k = 0; k < 8; k++)
        r |= ((m >> (2 * k)) & 1u) << k;
    return r;
}

/* sim_rows_stats in one pass over the cells, 16 at a time, for AVX-512F. Written with
 * intrinsics because GCC vectorises the plain loops' 32 x 32 -> 64-bit checksum products (and
 * the index times the constant) with vpmullq, a 64 x 64-bit multiplication of three micro-ops
 * on Intel's cores, where vpmuludq multiplies the low halves of each 64-bit lane in one. The 16
 * cells' bits as 8 lanes of 64 bits hold the even cells in the low halves and the odd ones in
 * the high halves, so the even cells' products need no shuffle and the odd ones' one shift
 * (after the xor, which puts g's high half over the odd cell's bits in place).
 * Each lane keeps g | 1 (g: the cell's index times the constant), stepped by 16 times the
 * constant: an even step keeps the low bit set, and setting it never changes g's high half, so
 * the one value serves both factors. The maximum is vmaxps's `v > m ? v : m`, the plain loop's
 * rule (a NaN never enters; of two zeros either may stay, which sim_max_zero_sign settles).
 * Every other operation is exact integer arithmetic or the plain loops' double additions in
 * the same order per column, so the results are theirs bit for bit. */
__attribute__((target("avx512f"))) static void rows_stats_avx512(
    const float *field, int w, int y0, int y1, uint64_t base, double *part, uint32_t *hi2,
    uint32_t *lo2, float *mx, uint64_t *sum)
{
    const uint64_t gold = SIM_CHECKSUM_GOLDEN;
    const __m512i step = _mm512_set1_epi64((long long)(16u * gold));
    const __m512i two = _mm512_set1_epi32(2);
    __m512i lane_g = _mm512_setzero_si512(); /* lane k: 2k times the constant */
    for (int k = 1; k < 8; k++)
        lane_g = _mm512_mask_add_epi64(lane_g, (__mmask8)(0xffu << k), lane_g,
                                       _mm512_set1_epi64((long long)(2u * gold)));
    __m512i hi = _mm512_set1_epi32((int)*hi2), lo = _mm512_set1_epi32((int)*lo2);
    __m512 top = _mm512_set1_ps(-INFINITY);
    __m512i acc = _mm512_setzero_si512();
    for (int y = y0; y < y1; y++) {
        const float *row = field + (int64_t)y * w;
        const __m512i g = _mm512_add_epi64(
            _mm512_set1_epi64((long long)((base + (uint64_t)y * (uint64_t)w) * gold)), lane_g);
        const __m512i one = _mm512_set1_epi64(1);
        __m512i ge = _mm512_or_si512(g, one);
        __m512i go = _mm512_or_si512(_mm512_add_epi64(g, _mm512_set1_epi64((long long)gold)), one);
        for (int x = 0; x < w; x += 16) {
            const __mmask16 m =
                w - x >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (w - x)) - 1u);
            const __m512 v = _mm512_maskz_loadu_ps(m, row + x);
            const __m512i b = _mm512_castps_si512(v);
            const __m512i k2 = _mm512_add_epi32(b, b); /* the magnitudes' keys */
            hi = _mm512_mask_max_epu32(hi, m, hi, k2);
            lo = _mm512_mask_min_epu32(lo, m, lo, _mm512_sub_epi32(k2, two));
            top = _mm512_mask_max_ps(top, m, v, top);
            const __m512i pe =
                _mm512_mul_epu32(_mm512_xor_si512(b, _mm512_srli_epi64(ge, 32)), ge);
            const __m512i po = _mm512_mul_epu32(_mm512_srli_epi64(_mm512_xor_si512(b, go), 32), go);
            ge = _mm512_add_epi64(ge, step);
            go = _mm512_add_epi64(go, step);
            const __m512d d0 = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
            if (m == 0xffff) {
                /* the high 8 cells converted from memory: no shuffle out of v */
                const __m512d d1 = _mm512_cvtps_pd(_mm256_loadu_ps(row + x + 8));
                acc = _mm512_add_epi64(acc, _mm512_add_epi64(pe, po));
                _mm512_storeu_pd(part + x, _mm512_add_pd(_mm512_loadu_pd(part + x), d0));
                _mm512_storeu_pd(part + x + 8, _mm512_add_pd(_mm512_loadu_pd(part + x + 8), d1));
            } else { /* the row's last cells */
                const __m512d d1 = _mm512_cvtps_pd(
                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
                acc = _mm512_mask_add_epi64(acc, (__mmask8)even_elements(m), acc, pe);
                acc = _mm512_mask_add_epi64(acc, (__mmask8)even_elements(m >> 1), acc, po);
                const __mmask8 m0 = (__mmask8)(m & 0xffu), m1 = (__mmask8)(m >> 8);
                _mm512_mask_storeu_pd(part + x, m0,
                                      _mm512_add_pd(_mm512_maskz_loadu_pd(m0, part + x), d0));
                _mm512_mask_storeu_pd(part + x + 8, m1,
                                      _mm512_add_pd(_mm512_maskz_loadu_pd(m1, part + x + 8), d1));
            }
        }
    }
    *hi2 = (uint32_t)_mm512_reduce_max_epu32(hi);
    *lo2 = (uint32_t)_mm512_reduce_min_epu32(lo);
    const float t = _mm512_reduce_max_ps(top);
    *mx = t > *mx ? t : *mx;
    /* the lanes added as unsigned (the header's _mm512_reduce_add_epi64 adds signed long longs,
     * whose wrap-around is undefined behaviour) */
    uint64_t lanes[8], terms = 0;
    _mm512_storeu_si512(lanes, acc);
    for (int k = 0; k < 8; k++)
        terms += lanes[k];
    *sum += terms;
}
#endif

void sim_rows_stats(const float *field, int w, int y0, int y1, uint64_t base, double *part,
                    uint32_t *hi2, uint32_t *lo2, float *mx, uint64_t *sum)
{
#if SIM_AVX512_ROWS
    if (__builtin_cpu_supports("avx512f")) {
        rows_stats_avx512(field, w, y0, y1, base, part, hi2, lo2, mx, sum);
        return;
    }
#endif
    column_sums_mags(field, w, y0, y1, part, hi2, lo2);
    cells_stats(field, (int64_t)y0 * w, (int64_t)y1 * w, base, mx, sum);
}

void sim_column_sums(const float *field, int w, int y0, int y1, int x0, int x1, double *colsum)
{
    column_sums(field, w, y0, y1, x0, x1, colsum);
}

/* Rows a block of the one-thread statistics: about 32 KB of the field, which sim_rows_stats's
 * second pass (without AVX-512F) then reads from the first-level cache. */
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
            uint32_t hi2 = 0u, lo2 = 0xffffffffu;
            sim_rows_stats(field, w, y0, y1, base, colsum, &hi2, &lo2, mx, sum);
        }
        return;
    }
    int x0, x1;
    sim_column_share(w, k, nt, &x0, &x1);
    for (int x = x0; x < x1; x++)
        colsum[x] = 0.0;
    column_sums(field, w, 0, h, x0, x1, colsum);
    const int64_t cells = (int64_t)w * h;
    cells_stats(field, cells * k / nt, cells * (k + 1) / nt, base, mx, sum);
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
