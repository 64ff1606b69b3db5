/* test_hz32.c - the CPU step's 32-bit horizon path (sim_hz_ext_build32_rows,
 * sim_hz_ext_dense_row, sim_hz_ext_candidates32) against the brute-force disk sum
 * (sim_horizon_disk_brute): every cell of grids narrower and shorter than the disk (periodic
 * multi-turn wraps), odd shapes, a grid wider than one dense column block, r = 0..64, both
 * boundary kinds, the dense row's halo columns and rows (-1 and w / h: wrapped or invalid), and
 * fields whose largest cells force the int64 span path (|cell| up to 2^23, NaN), each row built
 * in two ranges as threads would. Oracle tests: fast path against the naive one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "hz_test_util.h"
#include "sim_horizon.h"
#include "sim_rules.h"

static int modp(int v, int n)
{
    return ((v % n) + n) % n;
}

/* hot: 0 values in [0, 4), 1 values up to +-3000 (clamped to 2048: the int64 path), 2 also NaN
 * and infinities. */
static float *make_field(int w, int h, uint64_t seed, int hot)
{
    hz_rng g = {seed};
    float *f = malloc((size_t)w * h * sizeof *f);
    assert_non_null(f);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        f[i] = hot ? hz_uniform(&g, -3000.0f, 3000.0f) : hz_uniform(&g, 0.0f, 4.0f);
        if (hot == 2 && i % 7 == 3)
            f[i] = i % 2 ? NAN : (i % 3 ? INFINITY : -INFINITY);
    }
    return f;
}

static void check(int w, int h, int r, int periodic, int hot, uint64_t seed)
{
    float *f = make_field(w, h, seed, hot);
    uint32_t *rows32 = malloc((size_t)sim_hz_ext_rows_len(w, h, r) * sizeof *rows32);
    int64_t *off = malloc((size_t)sim_hz_ext_offset_len(h, r) * sizeof *off);
    int32_t *rowmax = malloc((size_t)h * sizeof *rowmax);
    int64_t *dense = malloc((size_t)SIM_HZ_DENSE_ROW(w) * sizeof *dense);
    assert_non_null(rows32);
    assert_non_null(off);
    assert_non_null(rowmax);
    assert_non_null(dense);
    sim_hz_ext e;
    sim_disk d;
    sim_disk_init(&d, r);
    sim_hz_ext_init(&e, w, h, r, periodic, NULL, off);
    sim_hz_ext_attach32(&e, rows32);
    /* Two ranges of rows, as two threads build them. */
    sim_hz_ext_build32_rows(&e, f, rowmax, 0, h / 2);
    sim_hz_ext_build32_rows(&e, f, rowmax, h / 2, h);
    int32_t allmax = 0;
    for (int y = 0; y < h; y++) {
        int32_t m = 0;
        for (int x = 0; x < w; x++) {
            int32_t v = sim_fix32(f[(size_t)y * w + x]);
            m = (v < 0 ? -v : v) > m ? (v < 0 ? -v : v) : m;
        }
        if (rowmax[y] != m)
            fail_msg("rowmax %dx%d row %d: %d, expected %d", w, h, y, rowmax[y], m);
        allmax = m > allmax ? m : allmax;
    }
    for (int y = -1; y <= h; y++) {
        /* allmax as given, then too large to decide (the row maxima decide): the same bits. */
        for (int pass = 0; pass < 2; pass++) {
            sim_hz_ext_dense_row(&e, &d, rowmax, pass ? INT32_MAX : allmax, y, dense);
            for (int x = -1; x <= w; x++) {
                int inside = x >= 0 && x < w && y >= 0 && y < h;
                int64_t want = periodic ? sim_horizon_disk_brute(f, w, h, 1, r, modp(x, w),
                                                                 modp(y, h))
                               : inside ? sim_horizon_disk_brute(f, w, h, 0, r, x, y)
                                        : SIM_SUM_INVALID;
                if (dense[x + 1] != want)
                    fail_msg("dense row %dx%d %s r=%d hot=%d (%d,%d) pass %d: %lld, expected "
                             "%lld", w, h, periodic ? "periodic" : "bounded", r, hot, x, y, pass,
                             (long long)dense[x + 1], (long long)want);
            }
        }
    }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int64_t sums[9];
            sim_hz_ext_candidates32(&e, &d, x, y, sums);
            for (int c = 0; c < 9; c++) {
                int cx = x + sim_cand_dx(c), cy = y + sim_cand_dy(c);
                int inside = cx >= 0 && cy >= 0 && cx < w && cy < h;
                int64_t want = periodic ? sim_horizon_disk_brute(f, w, h, 1, r, modp(cx, w),
                                                                 modp(cy, h))
                               : inside ? sim_horizon_disk_brute(f, w, h, 0, r, cx, cy)
                                        : SIM_SUM_INVALID;
                if (sums[c] != want)
                    fail_msg("candidates32 %dx%d r=%d (%d,%d) c=%d: %lld, expected %lld", w, h,
                             r, x, y, c, (long long)sums[c], (long long)want);
            }
        }
    free(dense);
    free(rowmax);
    free(off);
    free(rows32);
    free(f);
}

static void test_small_grids(void **state)
{
    (void)state;
    static const int shapes[][2] = {{1, 1}, {1, 5}, {5, 1}, {2, 3}, {7, 4}, {13, 11}, {40, 30}};
    static const int radii[] = {0, 1, 2, 3, 5, 8, 13};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t k = 0; k < sizeof radii / sizeof radii[0]; k++)
            for (int periodic = 0; periodic <= 1; periodic++)
                for (int hot = 0; hot <= 2; hot++)
                    check(shapes[s][0], shapes[s][1], radii[k], periodic, hot,
                          1000 + s * 31 + k * 7 + (uint64_t)hot);
}

/* Radii up to the limit, on grids the disk wraps around several times. */
static void test_large_radii(void **state)
{
    (void)state;
    static const int radii[] = {20, 32, 64};
    for (size_t k = 0; k < sizeof radii / sizeof radii[0]; k++)
        for (int periodic = 0; periodic <= 1; periodic++)
            for (int hot = 0; hot <= 1; hot++)
                check(23, 9, radii[k], periodic, hot, 77 + k + (uint64_t)hot);
}

/* Wider than one 1024-column block of the dense pass. */
static void test_wide_grid(void **state)
{
    (void)state;
    for (int periodic = 0; periodic <= 1; periodic++)
        for (int hot = 0; hot <= 1; hot++)
            check(1100, 3, 4, periodic, hot, 5 + (uint64_t)hot);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_grids),
        cmocka_unit_test(test_large_radii),
        cmocka_unit_test(test_wide_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
