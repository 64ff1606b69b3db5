/* test_horizon.c - exact horizon sums: the prefix-row path against a disk sum written here
 * (every offset visited, fixed point computed here) for r = 0..32, at every cell of small grids
 * (so every cell is near an edge), along the edges and at random interior cells of a larger one,
 * for periodic grids (also smaller than the disk) and bounded grids; candidate sums; sim_fix. */
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
#include "sim_scenario.h"

/* Fixed point with 12 fraction bits, clamped to +-2048, NaN as 0, truncating toward zero: the
 * conversion sim_rules.h documents, written independently (in double: exact for floats). */
static int64_t ref_fix(float f)
{
    if (isnan(f))
        return 0;
    double d = f;
    if (d > 2048.0)
        d = 2048.0;
    if (d < -2048.0)
        d = -2048.0;
    return (int64_t)trunc(d * 4096.0);
}

static int modp(int v, int n)
{
    return ((v % n) + n) % n;
}

/* The disk sum by definition: every (dx, dy) with dx^2 + dy^2 <= r^2 once. */
static int64_t ref_disk(const float *f, int w, int h, int periodic, int r, int x, int y)
{
    int64_t sum = 0;
    for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++) {
            if (dx * dx + dy * dy > r * r)
                continue;
            int xx = x + dx, yy = y + dy;
            if (periodic) {
                xx = modp(xx, w);
                yy = modp(yy, h);
            } else if (xx < 0 || yy < 0 || xx >= w || yy >= h) {
                continue;
            }
            sum += ref_fix(f[(size_t)yy * w + xx]);
        }
    return sum;
}

/* Random field with negative values, values beyond the clamp, and a NaN or two. */
static float *random_field(int w, int h, uint64_t seed)
{
    hz_rng r = {seed};
    float *f = malloc((size_t)w * h * sizeof *f);
    assert_non_null(f);
    for (int i = 0; i < w * h; i++) {
        uint64_t k = hz_below(&r, 100);
        if (k == 0)
            f[i] = NAN;
        else if (k == 1)
            f[i] = 3e7f;
        else if (k == 2)
            f[i] = -5e7f;
        else
            f[i] = hz_uniform(&r, -100.0f, 1000.0f);
    }
    return f;
}

/* Compares the prefix path and (when with_brute) the library's brute force with ref_disk at
 * one cell. */
static void check_cell_ex(const float *f, const int64_t *prefix, int w, int h, int periodic,
                          const sim_disk *d, int x, int y, int with_brute)
{
    int64_t want = ref_disk(f, w, h, periodic, d->r, x, y);
    int64_t fast = sim_horizon_disk(prefix, w, h, periodic, d, x, y);
    int64_t brute = with_brute ? sim_horizon_disk_brute(f, w, h, periodic, d->r, x, y) : want;
    if (fast != want || brute != want)
        fail_msg("%dx%d %s r=%d at (%d,%d): prefix %lld, brute %lld, expected %lld", w, h,
                 periodic ? "periodic" : "bounded", d->r, x, y, (long long)fast,
                 (long long)brute, (long long)want);
}

static void check_cell(const float *f, const int64_t *prefix, int w, int h, int periodic,
                       const sim_disk *d, int x, int y)
{
    check_cell_ex(f, prefix, w, h, periodic, d, x, y, 1);
}

/* Every cell of a w x h grid, r = 0..32, both boundary kinds. */
static void every_cell(int w, int h, uint64_t seed)
{
    float *f = random_field(w, h, seed);
    int64_t *prefix = malloc((size_t)(w + 1) * h * sizeof *prefix);
    assert_non_null(prefix);
    sim_horizon_prefix(f, w, h, prefix);
    for (int r = 0; r <= 32; r++) {
        sim_disk d;
        sim_disk_init(&d, r);
        for (int periodic = 0; periodic <= 1; periodic++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    check_cell(f, prefix, w, h, periodic, &d, x, y);
    }
    free(prefix);
    free(f);
}

static void test_small_grids_every_cell(void **state)
{
    (void)state;
    every_cell(40, 37, 1);  /* disks from much smaller to wider than the grid */
    every_cell(5, 7, 2);    /* smaller than the disk for every r > 3 */
    every_cell(1, 1, 3);
    every_cell(1, 23, 4);
    every_cell(29, 1, 5);
    every_cell(2, 3, 6);
}

/* A 5x7 periodic grid and r = 9: the disk wraps more than once; each cell counts as often as
 * the disk covers one of its images (counted here by multiplicity). */
static void test_periodic_multiplicity(void **state)
{
    (void)state;
    const int w = 5, h = 7, r = 9;
    float f[35];
    for (int i = 0; i < 35; i++)
        f[i] = (float)(i + 1); /* exact in fixed point */
    int64_t prefix[6 * 7];
    sim_horizon_prefix(f, w, h, prefix);
    sim_disk d;
    sim_disk_init(&d, r);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int mult[35] = {0};
            for (int dy = -r; dy <= r; dy++)
                for (int dx = -r; dx <= r; dx++)
                    if (dx * dx + dy * dy <= r * r)
                        mult[modp(y + dy, h) * w + modp(x + dx, w)]++;
            int64_t want = 0;
            int total = 0;
            for (int i = 0; i < 35; i++) {
                want += (int64_t)mult[i] * (i + 1) * 4096;
                total += mult[i];
            }
            assert_int_equal(total, 253); /* lattice points in a disk of radius 9 */
            assert_true(sim_horizon_disk(prefix, w, h, 1, &d, x, y) == want);
        }
}

/* A larger grid: every cell within 2 of an edge, every cell where the disk just reaches the
 * edge, and random interior cells. */
static void test_large_grid_edges_and_interior(void **state)
{
    (void)state;
    const int w = 173, h = 131;
    float *f = random_field(w, h, 77);
    int64_t *prefix = malloc((size_t)(w + 1) * h * sizeof *prefix);
    assert_non_null(prefix);
    sim_horizon_prefix(f, w, h, prefix);
    hz_rng rng = {99};
    for (int r = 0; r <= 32; r++) {
        sim_disk d;
        sim_disk_init(&d, r);
        for (int periodic = 0; periodic <= 1; periodic++) {
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    int ex = x < w - 1 - x ? x : w - 1 - x;
                    int ey = y < h - 1 - y ? y : h - 1 - y;
                    int e = ex < ey ? ex : ey;
                    if (e < 2 || e == r)
                        check_cell_ex(f, prefix, w, h, periodic, &d, x, y, 0);
                }
            for (int k = 0; k < 50; k++)
                check_cell(f, prefix, w, h, periodic, &d, (int)hz_below(&rng, (uint64_t)w),
                           (int)hz_below(&rng, (uint64_t)h));
        }
    }
    free(prefix);
    free(f);
}

/* The largest radius with the largest values: exact, no overflow. */
static void test_radius_64_extremes(void **state)
{
    (void)state;
    const int w = 140, h = 131;
    float *f = malloc((size_t)w * h * sizeof *f);
    assert_non_null(f);
    for (int i = 0; i < w * h; i++)
        f[i] = i % 3 ? 1e30f : -1e30f;
    int64_t *prefix = malloc((size_t)(w + 1) * h * sizeof *prefix);
    assert_non_null(prefix);
    sim_horizon_prefix(f, w, h, prefix);
    sim_disk d;
    sim_disk_init(&d, 64);
    for (int periodic = 0; periodic <= 1; periodic++) {
        check_cell(f, prefix, w, h, periodic, &d, 70, 65);
        check_cell(f, prefix, w, h, periodic, &d, 0, 0);
        check_cell(f, prefix, w, h, periodic, &d, w - 1, h - 1);
    }
    free(prefix);
    free(f);
}

static void test_disk_halfwidth(void **state)
{
    (void)state;
    for (int r = 0; r <= 64; r++) {
        sim_disk d;
        sim_disk_init(&d, r);
        assert_int_equal(d.r, r);
        for (int dy = -r; dy <= r; dy++) {
            int want = (int)floor(sqrt((double)(r * r - dy * dy)) + 1e-9);
            assert_int_equal(d.hw[dy + r], want);
            assert_int_equal(sim_disk_halfwidth(r, dy), want);
        }
        assert_int_equal(sim_disk_halfwidth(r, r + 1), -1);
    }
}

/* Candidate sums: the 9 cells in the documented order; outside a bounded grid invalid. */
static void test_candidates(void **state)
{
    (void)state;
    static const int cdx[9] = {0, -1, 0, 1, -1, 1, -1, 0, 1};
    static const int cdy[9] = {0, -1, -1, -1, 0, 0, 1, 1, 1};
    for (int c = 0; c < SIM_NCAND; c++) {
        assert_int_equal(sim_cand_dx(c), cdx[c]);
        assert_int_equal(sim_cand_dy(c), cdy[c]);
    }
    const int w = 11, h = 9;
    float *f = random_field(w, h, 5);
    int64_t prefix[12 * 9];
    sim_horizon_prefix(f, w, h, prefix);
    for (int r = 0; r <= 6; r++) {
        sim_disk d;
        sim_disk_init(&d, r);
        for (int periodic = 0; periodic <= 1; periodic++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    int64_t sums[9];
                    sim_horizon_candidates(prefix, w, h, periodic, &d, x, y, sums);
                    for (int c = 0; c < 9; c++) {
                        int cx = x + cdx[c], cy = y + cdy[c];
                        int inside = cx >= 0 && cy >= 0 && cx < w && cy < h;
                        int64_t want;
                        if (periodic)
                            want = ref_disk(f, w, h, 1, r, modp(cx, w), modp(cy, h));
                        else if (!inside)
                            want = SIM_SUM_INVALID;
                        else
                            want = ref_disk(f, w, h, 0, r, cx, cy);
                        if (sums[c] != want)
                            fail_msg("%s r=%d (%d,%d) candidate %d: %lld, expected %lld",
                                     periodic ? "periodic" : "bounded", r, x, y, c,
                                     (long long)sums[c], (long long)want);
                    }
                }
    }
    free(f);
}

/* The fast path (extended prefix rows): per-agent candidate sums and the dense sum of every
 * cell, against ref_disk, on grids narrower and shorter than the disk (periodic multi-turn
 * wraps), odd shapes, a grid wider than one dense column block, every radius class, both
 * boundary kinds, and 1 and 2 threads for the dense pass. */
static void check_ext(int w, int h, int r, int periodic, uint64_t seed, int all_cells)
{
    float *f = random_field(w, h, seed);
    int64_t *rows = malloc((size_t)sim_hz_ext_rows_len(w, h, r) * sizeof *rows);
    int64_t *off = malloc((size_t)sim_hz_ext_offset_len(h, r) * sizeof *off);
    int64_t *dense = malloc((size_t)w * h * sizeof *dense);
    assert_non_null(rows);
    assert_non_null(off);
    assert_non_null(dense);
    sim_hz_ext e;
    sim_disk d;
    sim_disk_init(&d, r);
    sim_hz_ext_init(&e, w, h, r, periodic, rows, off);
    for (int threads = 1; threads <= 2; threads++) {
        sim_hz_ext_build(&e, f, threads);
        sim_hz_ext_dense(&e, &d, dense, threads);
        hz_rng g = {seed + 7};
        int n = all_cells ? w * h : 300;
        for (int k = 0; k < n; k++) {
            int x = all_cells ? k % w : (int)hz_below(&g, (uint64_t)w);
            int y = all_cells ? k / w : (int)hz_below(&g, (uint64_t)h);
            int64_t want = ref_disk(f, w, h, periodic, r, x, y);
            if (dense[(size_t)y * w + x] != want)
                fail_msg("dense %dx%d %s r=%d (%d,%d): %lld, expected %lld", w, h,
                         periodic ? "periodic" : "bounded", r, x, y,
                         (long long)dense[(size_t)y * w + x], (long long)want);
            if (threads == 2)
                continue;
            int64_t sums[9];
            sim_hz_ext_candidates(&e, &d, x, y, sums);
            for (int c = 0; c < 9; c++) {
                int cx = x + sim_cand_dx(c), cy = y + sim_cand_dy(c);
                int inside = cx >= 0 && cy >= 0 && cx < w && cy < h;
                int64_t wc = periodic ? ref_disk(f, w, h, 1, r, modp(cx, w), modp(cy, h))
                             : inside ? ref_disk(f, w, h, 0, r, cx, cy)
                                      : SIM_SUM_INVALID;
                if (sums[c] != wc)
                    fail_msg("candidates %dx%d %s r=%d (%d,%d) c=%d: %lld, expected %lld", w, h,
                             periodic ? "periodic" : "bounded", r, x, y, c,
                             (long long)sums[c], (long long)wc);
            }
        }
    }
    free(dense);
    free(off);
    free(rows);
    free(f);
}

static void test_ext_fast_path(void **state)
{
    (void)state;
    static const int shapes[][2] = {{1, 1}, {1, 5}, {5, 1}, {2, 3}, {7, 4}, {13, 11}, {40, 30}};
    static const int radii[] = {0, 1, 2, 3, 5, 8, 9, 17, 32};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t k = 0; k < sizeof radii / sizeof radii[0]; k++)
            for (int periodic = 0; periodic <= 1; periodic++)
                check_ext(shapes[s][0], shapes[s][1], radii[k], periodic, 100 + s * 10 + k, 1);
    /* Wider than one dense column block (512), and the largest radius. */
    for (int periodic = 0; periodic <= 1; periodic++) {
        check_ext(1100, 70, 8, periodic, 31, 0);
        check_ext(600, 140, 64, periodic, 32, 0);
        check_ext(700, 3, 64, periodic, 33, 0);
    }
}

/* Cells of the disk of radius r, counted by definition. */
static int64_t ref_disk_cells(int r)
{
    int64_t n = 0;
    for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++)
            n += dx * dx + dy * dy <= r * r;
    return n;
}

/* A field of exact fixed-point values v / 4096 with |v| <= m, at least one |v| == m: pattern 0
 * all +m, 1 all -m, 2 mostly +m, 3 uniform in [-m, m], 4 half +m and half -m by rows. */
static float *bound_field(int w, int h, int64_t m, int pattern, uint64_t seed)
{
    hz_rng g = {seed};
    float *f = malloc((size_t)w * h * sizeof *f);
    assert_non_null(f);
    for (int i = 0; i < w * h; i++) {
        int64_t v;
        if (pattern == 0)
            v = m;
        else if (pattern == 1)
            v = -m;
        else if (pattern == 2)
            v = hz_below(&g, 8) ? m : m - (int64_t)hz_below(&g, (uint64_t)m + 1);
        else if (pattern == 3)
            v = (int64_t)hz_below(&g, 2 * (uint64_t)m + 1) - m;
        else
            v = (i / w) % 2 ? m : -m;
        f[i] = (float)v / 4096.0f;
    }
    f[(size_t)hz_below(&g, (uint64_t)w * h)] = (float)(pattern == 1 ? -m : m) / 4096.0f;
    return f;
}

/* The dense pass's 32-bit path (sim_hz_ext_fits32) against ref_disk: fields whose largest
 * |value| is just under the bound (the 32-bit path is taken, disk sums up to just under 2^31 in
 * magnitude) and just over it (the int64 path), r = 0..32, both boundary kinds, 1 and 2 threads,
 * the automatic choice and the int64 pass forced, every cell or (wide grids) sampled cells. */
static void check_dense32(int w, int h, int r, int periodic, int64_t m, int pattern,
                          uint64_t seed, int all_cells)
{
    float *f = bound_field(w, h, m, pattern, seed);
    int64_t *rows = malloc((size_t)sim_hz_ext_rows_len(w, h, r) * sizeof *rows);
    uint32_t *rows32 = malloc((size_t)sim_hz_ext_rows_len(w, h, r) * sizeof *rows32);
    int64_t *off = malloc((size_t)sim_hz_ext_offset_len(h, r) * sizeof *off);
    int64_t *dense = malloc((size_t)w * h * sizeof *dense);
    int64_t *dense64 = malloc((size_t)w * h * sizeof *dense64);
    assert_true(rows && rows32 && off && dense && dense64);
    sim_hz_ext e;
    sim_disk d;
    sim_disk_init(&d, r);
    sim_hz_ext_init(&e, w, h, r, periodic, rows, off);
    sim_hz_ext_attach32(&e, rows32);
    int want32 = m * ref_disk_cells(r) < ((int64_t)1 << 31);
    for (int threads = 1; threads <= 2; threads++) {
        sim_hz_ext_build(&e, f, threads);
        assert_int_equal(e.maxabs, m);
        if (sim_hz_ext_fits32(&e, &d) != want32)
            fail_msg("fits32 %dx%d r=%d m=%lld: %d, expected %d", w, h, r, (long long)m,
                     sim_hz_ext_fits32(&e, &d), want32);
        sim_hz_ext_dense(&e, &d, dense, threads);
        sim_hz_ext_dense_width(&e, &d, dense64, threads, 0);
        hz_rng g = {seed + 11};
        int n = all_cells ? w * h : 400;
        for (int k = 0; k < n; k++) {
            int x = all_cells ? k % w : (int)hz_below(&g, (uint64_t)w);
            int y = all_cells ? k / w : (int)hz_below(&g, (uint64_t)h);
            int64_t want = ref_disk(f, w, h, periodic, r, x, y);
            size_t i = (size_t)y * w + x;
            if (dense[i] != want || dense64[i] != want)
                fail_msg("dense32 %dx%d %s r=%d m=%lld p=%d (%d,%d): %lld / %lld (int64), "
                         "expected %lld", w, h, periodic ? "periodic" : "bounded", r,
                         (long long)m, pattern, x, y, (long long)dense[i],
                         (long long)dense64[i], (long long)want);
        }
    }
    free(dense64);
    free(dense);
    free(off);
    free(rows32);
    free(rows);
    free(f);
}

static void test_dense32_threshold(void **state)
{
    (void)state;
    for (int r = 0; r <= 32; r++) {
        int64_t cells = ref_disk_cells(r);
        int64_t under = (((int64_t)1 << 31) - 1) / cells; /* the largest m that fits */
        for (int side = 0; side <= 1; side++) {
            int64_t m = under + side;
            if (m > SIM_FIX_CELL_MAX) {
                if (side == 1)
                    continue; /* no field gets over the bound: always 32 bits */
                m = SIM_FIX_CELL_MAX;
            }
            for (int periodic = 0; periodic <= 1; periodic++)
                for (int pattern = 0; pattern < 5; pattern++) {
                    uint64_t seed = 1000 + (uint64_t)r * 20 + side * 10 + periodic * 5 + pattern;
                    /* Periodic grids narrower than the disk count cells more than once. */
                    int w = 5 + (r * 7 + pattern * 3) % 29, h = 3 + (r * 5 + pattern) % 23;
                    check_dense32(w, h, r, periodic, m, pattern, seed, 1);
                }
            /* Wider than a 32-bit dense column block (1024). */
            if (r % 8 == 0)
                for (int periodic = 0; periodic <= 1; periodic++)
                    check_dense32(1100, 5, r, periodic, m, 3, 77 + (uint64_t)r, 0);
        }
    }
}

static void test_fix(void **state)
{
    (void)state;
    assert_true(sim_fix(0.0f) == 0);
    assert_true(sim_fix(-0.0f) == 0);
    assert_true(sim_fix(1.0f) == 4096);
    assert_true(sim_fix(0.5f) == 2048);
    assert_true(sim_fix(-0.75f) == -3072);
    assert_true(sim_fix(100.0f) == 409600);
    assert_true(sim_fix(1.0f / 4096.0f) == 1);
    assert_true(sim_fix(1.0f / 8192.0f) == 0);  /* truncates toward zero */
    assert_true(sim_fix(-1.0f / 8192.0f) == 0);
    assert_true(sim_fix(-3.0f / 8192.0f) == -1);
    assert_true(sim_fix(2047.9998f) == 8388607);
    assert_true(sim_fix(2048.0f) == (1LL << 23));
    assert_true(sim_fix(3000.0f) == (1LL << 23));
    assert_true(sim_fix(1e30f) == (1LL << 23));
    assert_true(sim_fix(-1e30f) == -(1LL << 23));
    assert_true(sim_fix(INFINITY) == (1LL << 23));
    assert_true(sim_fix(-INFINITY) == -(1LL << 23));
    assert_true(sim_fix(INFINITY) == SIM_FIX_CELL_MAX);
    /* The bounds the GPU's 32-bit prefix rows rely on (sim_rules.h): a row span of the largest
     * disk, and a whole disk of 255 cells, stay under 2^31. */
    assert_true((int64_t)(2 * SIM_MAX_RADIUS + 1) * SIM_FIX_CELL_MAX < INT32_MAX);
    assert_true((int64_t)255 * SIM_FIX_CELL_MAX < INT32_MAX);
    assert_true(sim_fix(NAN) == 0);
    assert_true(sim_fix(-NAN) == 0);
    hz_rng r = {3};
    for (int i = 0; i < 100000; i++) {
        uint32_t bits = (uint32_t)hz_next(&r);
        float v;
        memcpy(&v, &bits, sizeof v);
        if (sim_fix(v) != ref_fix(v))
            fail_msg("sim_fix(%a) = %lld, expected %lld", (double)v, (long long)sim_fix(v),
                     (long long)ref_fix(v));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fix),
        cmocka_unit_test(test_disk_halfwidth),
        cmocka_unit_test(test_small_grids_every_cell),
        cmocka_unit_test(test_periodic_multiplicity),
        cmocka_unit_test(test_large_grid_edges_and_interior),
        cmocka_unit_test(test_radius_64_extremes),
        cmocka_unit_test(test_candidates),
        cmocka_unit_test(test_ext_fast_path),
        cmocka_unit_test(test_dense32_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
