/* test_gpu_horizon.c - the CUDA backend's horizon sums in both modes (dense, sparse) and every
 * tile mapping against the brute-force disk sum (sim_horizon_disk_brute), on grids from 1x1 to
 * many tiles, radii 0..64, periodic and bounded, with NaN, huge and negative field values and
 * with every cell at the fixed-point clamp (the limits of the GPU's 32-bit prefix rows); queries
 * crowded into a few tiles (tiles of very different counts, for the SELL mapping's sort and its
 * rounds across tiles); the paint brush against the CPU backend's; and sim_compose on the CUDA
 * backend against render_frame_compose pixel for pixel. Skipped (77) without a usable GPU.
 * HZ_GPU_QUICK=1 runs fewer cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "gpu_backend.h"
#include "hz_test_util.h"
#include "render_frame.h"
#include "sim.h"
#include "sim_horizon.h"
#include "sim_rules.h"

static int quick;

/* The mappings the cases take in turn (one block per tile and SELL run in test_sums_many_tiles
 * and test_sums_crowded too). */
static const int mappings[] = {GPU_MAP_RAKE, GPU_MAP_STRIP, GPU_MAP_DYNAMIC, GPU_MAP_SELL};
#define NMAPPINGS ((int)(sizeof mappings / sizeof mappings[0]))

static sim_scenario world(int w, int h, int boundary, int r)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = w;
    sc.height = h;
    sc.boundary = boundary;
    sc.radius = r;
    return sc;
}

/* Field values with the awkward ones mixed in: NaN (counts 0), beyond the fixed-point clamp,
 * negative, tiny. */
static void fill_field(float *f, int64_t cells, hz_rng *rng)
{
    for (int64_t i = 0; i < cells; i++) {
        uint64_t k = hz_below(rng, 100);
        f[i] = k == 0   ? NAN
             : k == 1   ? 3e7f
             : k == 2   ? -5e7f
             : k == 3   ? 1e-30f
                        : hz_uniform(rng, -4.0f, 8.0f);
    }
}

static sim *create_state(const sim_scenario *sc0, const sim_backend_ops *ops, const float *field,
                         const uint32_t *agents, int64_t n)
{
    sim_scenario sc = *sc0;
    sc.count = n;
    sim *s = NULL;
    sim_err err = {{0}};
    if (sim_create_from_state(&sc, ops, 0, 0, field, agents, n, &s, &err) != SIM_OK)
        fail_msg("create (%s): %s", ops->name, err.msg);
    return s;
}

static int wrapi(int v, int n)
{
    v %= n;
    return v < 0 ? v + n : v;
}

/* Fields at the fixed-point limits: every cell at +clamp or -clamp (the largest row spans and
 * disks there are), or rows alternating between them (the largest spans of both signs). */
enum { FILL_RANDOM, FILL_MAX, FILL_MIN, FILL_ROWS };

static void fill_kind(float *f, int w, int h, int kind, hz_rng *rng)
{
    if (kind == FILL_RANDOM) {
        fill_field(f, (int64_t)w * h, rng);
        return;
    }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            f[(int64_t)y * w + x] = kind == FILL_MAX   ? 1e9f
                                  : kind == FILL_MIN   ? -INFINITY
                                  : y % 2 ? SIM_FIX_CLAMP : -SIM_FIX_CLAMP;
}

/* A query cell: uniform over the grid, or with `crowd` mostly in a few small squares (so that
 * some tiles hold hundreds of queries, several rounds of a block, and most hold few). */
static uint32_t query_cell(int w, int h, int crowd, hz_rng *rng)
{
    if (!crowd || hz_below(rng, 4) == 0)
        return (uint32_t)hz_below(rng, (uint64_t)w * (uint64_t)h);
    static const int spots[][2] = {{0, 0}, {70, 40}, {200, 100}, {500, 300}};
    const int k = (int)hz_below(rng, 4), side = 9 + 7 * k;
    const int x = (spots[k][0] + (int)hz_below(rng, (uint64_t)side)) % w;
    const int y = (spots[k][1] + (int)hz_below(rng, (uint64_t)side)) % h;
    return (uint32_t)((int64_t)y * w + x);
}

static void check_case_full(int w, int h, int boundary, int r, int nq, int mapping, int fill,
                            int crowd, hz_rng *rng)
{
    sim_scenario sc = world(w, h, boundary, r);
    int64_t cells = (int64_t)w * h;
    float *field = malloc((size_t)cells * sizeof *field);
    uint32_t *q = malloc((size_t)(nq + 4) * sizeof *q);
    int64_t *sums = malloc((size_t)(nq + 4) * 9 * sizeof *sums);
    assert_non_null(field);
    assert_non_null(q);
    assert_non_null(sums);
    fill_kind(field, w, h, fill, rng);
    int n = 0;
    q[n++] = 0;
    q[n++] = (uint32_t)(w - 1);
    q[n++] = (uint32_t)((int64_t)(h - 1) * w);
    q[n++] = (uint32_t)(cells - 1);
    for (int i = 0; i < nq; i++) /* duplicates allowed */
        q[n++] = query_cell(w, h, crowd, rng);
    const int periodic = boundary == SIM_BOUNDARY_PERIODIC;
    sim *g = create_state(&sc, gpu_cuda_backend(), field, NULL, 0);
    for (int mode = GPU_HMODE_DENSE; mode <= GPU_HMODE_SPARSE; mode++) {
        gpu_tuning t = {mode, mapping, 0, 0, 0};
        sim_err err = {{0}};
        if (gpu_tune(g, &t, &err) != SIM_OK)
            fail_msg("gpu_tune: %s", err.msg);
        memset(sums, 0x5a, (size_t)n * 9 * sizeof *sums);
        if (sim_horizon(g, q, n, sums) != SIM_OK)
            fail_msg("%dx%d r=%d: horizon: %s", w, h, r, sim_errmsg(g));
        int used = gpu_horizon_mode(g);
        for (int i = 0; i < n; i++) {
            int x = (int)(q[i] % (uint32_t)w), y = (int)(q[i] / (uint32_t)w);
            for (int c = 0; c < 9; c++) {
                int cx = x + sim_cand_dx(c), cy = y + sim_cand_dy(c);
                int64_t want;
                if (!periodic && (cx < 0 || cy < 0 || cx >= w || cy >= h))
                    want = SIM_SUM_INVALID;
                else
                    want = sim_horizon_disk_brute(field, w, h, periodic, r,
                                                  periodic ? wrapi(cx, w) : cx,
                                                  periodic ? wrapi(cy, h) : cy);
                if (sums[9 * i + c] != want)
                    fail_msg("%dx%d %s r=%d mode %d (used %d) mapping %d: cell (%d,%d) candidate "
                             "%d: got %lld want %lld", w, h, sim_boundary_name(boundary), r, mode,
                             used, mapping, x, y, c, (long long)sums[9 * i + c], (long long)want);
            }
        }
    }
    sim_destroy(g);
    free(field);
    free(q);
    free(sums);
}

static void check_case_fill(int w, int h, int boundary, int r, int nq, int mapping, int fill,
                            hz_rng *rng)
{
    check_case_full(w, h, boundary, r, nq, mapping, fill, 0, rng);
}

static void check_case(int w, int h, int boundary, int r, int nq, int mapping, hz_rng *rng)
{
    check_case_fill(w, h, boundary, r, nq, mapping, FILL_RANDOM, rng);
}

/* The fixed-point extremes around the switch from 32-bit to 64-bit disk sums (r = 9 has 253
 * cells, r = 10 has 317) and at the largest radius: the GPU's wrapped 32-bit prefix rows must
 * still give the exact int64 sums. */
static void test_sums_saturated(void **state)
{
    (void)state;
    hz_rng rng = {0x5A7ull};
    static const int radii[] = {8, 9, 10, 32, 64};
    for (int ri = 0; ri < 5; ri++)
        for (int fill = FILL_MAX; fill <= FILL_ROWS; fill++) {
            check_case_fill(200, 131, SIM_BOUNDARY_PERIODIC, radii[ri], 40,
                            mappings[(fill + ri) % NMAPPINGS], fill, &rng);
            if (!quick)
                check_case_fill(67, 45, SIM_BOUNDARY_WALL, radii[ri], 40,
                                mappings[(ri + 2 * fill) % NMAPPINGS], fill, &rng);
        }
}

static void test_sums_vs_brute(void **state)
{
    (void)state;
    hz_rng rng = {0xC0FFEEull};
    static const int sizes[][2] = {{1, 1}, {3, 2}, {17, 5}, {64, 64}, {65, 63}, {200, 131},
                                   {129, 300}};
    static const int radii[] = {0, 1, 2, 5, 8, 17, 32, 64};
    const int nsizes = quick ? 4 : 7, nradii = quick ? 5 : 8;
    int k = 0;
    for (int s = 0; s < nsizes; s++)
        for (int ri = 0; ri < nradii; ri++)
            for (int b = 0; b < 3; b += 1 + (quick || ri % 2)) {
                int r = quick && ri == nradii - 1 ? 64 : radii[ri];
                check_case(sizes[s][0], sizes[s][1], b, r, quick ? 20 : 60,
                           mappings[k++ % NMAPPINGS], &rng);
            }
}

/* Many tiles and many queries: every mapping hands out every tile. */
static void test_sums_many_tiles(void **state)
{
    (void)state;
    hz_rng rng = {0xBADC0DEull};
    for (int map = GPU_MAP_RAKE; map <= GPU_MAP_SELL; map++) {
        check_case(quick ? 300 : 1000, quick ? 200 : 700, SIM_BOUNDARY_PERIODIC, 8,
                   quick ? 2000 : 20000, map, &rng);
        check_case(quick ? 250 : 777, quick ? 150 : 333, SIM_BOUNDARY_WALL, 3,
                   quick ? 2000 : 20000, map, &rng);
    }
}

/* Queries crowded into a few tiles: tiles of a few queries beside tiles of several hundred (more
 * than a block's round), empty tiles, and tile counts that are not a multiple of SELL's window
 * or slice (777x333 in tiles of 32: 275; 1000x700 in tiles of 64: 176; 67x45 and 200x131 in
 * tiles of 16: 15 and 117), radii 3 to 64 (SELL's two regions of r = 64 take ~178 KB). Every
 * mapping, so that SELL's sums are checked against the brute force as the others'; every case
 * runs both modes, and in dense mode SELL runs as the dynamic mapping. */
static void test_sums_crowded(void **state)
{
    (void)state;
    hz_rng rng = {0xC20D0ull};
    /* width, height, boundary, radius, queries (fewer for large disks: the brute force costs
     * a disk a candidate) */
    static const int cases[][5] = {{777, 333, SIM_BOUNDARY_PERIODIC, 8, 6000},
                                   {1000, 700, SIM_BOUNDARY_WALL, 3, 6000},
                                   {67, 45, SIM_BOUNDARY_PERIODIC, 17, 3000},
                                   {777, 333, SIM_BOUNDARY_WALL, 32, 2000},
                                   {200, 131, SIM_BOUNDARY_PERIODIC, 64, 800}};
    const int ncases = quick ? 3 : 5;
    for (int i = 0; i < ncases; i++)
        for (int map = GPU_MAP_RAKE; map <= GPU_MAP_SELL; map++)
            check_case_full(cases[i][0], cases[i][1], cases[i][2], cases[i][3],
                            quick ? cases[i][4] / 4 : cases[i][4], map, FILL_RANDOM, 1, &rng);
}

static void test_paint_matches_cpu(void **state)
{
    (void)state;
    hz_rng rng = {77};
    sim_scenario sc = world(53, 41, SIM_BOUNDARY_PERIODIC, 2);
    int64_t cells = 53 * 41;
    float *f = malloc((size_t)cells * sizeof *f), *a = malloc((size_t)cells * sizeof *a),
          *b = malloc((size_t)cells * sizeof *b);
    assert_non_null(f);
    assert_non_null(a);
    assert_non_null(b);
    /* No NaN here: CPU and GPU both keep NaN a NaN, but not the same payload bits. */
    for (int64_t i = 0; i < cells; i++)
        f[i] = hz_uniform(&rng, -3.0f, 3.0f);
    sim *c = create_state(&sc, sim_cpu_backend(), f, NULL, 0);
    sim *g = create_state(&sc, gpu_cuda_backend(), f, NULL, 0);
    static const int brush[][3] = {{0, 0, 3}, {52, 40, 5}, {26, 20, 0}, {10, 30, 100},
                                   {-4, 7, 6}, {60, 60, 2}};
    for (int i = 0; i < 6; i++) {
        float amount = hz_uniform(&rng, -2, 2);
        assert_int_equal(sim_paint(c, brush[i][0], brush[i][1], brush[i][2], amount), SIM_OK);
        assert_int_equal(sim_paint(g, brush[i][0], brush[i][1], brush[i][2], amount), SIM_OK);
    }
    assert_int_equal(sim_read_field(c, a), SIM_OK);
    assert_int_equal(sim_read_field(g, b), SIM_OK);
    assert_memory_equal(a, b, (size_t)cells * sizeof *a);
    sim_destroy(c);
    sim_destroy(g);
    free(f);
    free(a);
    free(b);
}

static void compose_case(sim *g, const float *field, const uint8_t *occ, int fw, int fh,
                         sim_view *v, const char *what)
{
    size_t bytes = (size_t)v->w * v->h * 4;
    uint8_t *want = malloc(bytes), *got = malloc(bytes);
    assert_non_null(want);
    assert_non_null(got);
    render_frame_compose(v, field, fw, fh, occ, render_field_max(field, (int64_t)fw * fh), want);
    memset(got, 0xa5, bytes);
    assert_true(sim_compose_in_backend(g));
    if (sim_compose(g, v, got) != SIM_OK)
        fail_msg("%s: compose: %s", what, sim_errmsg(g));
    for (size_t i = 0; i < bytes; i++)
        if (want[i] != got[i])
            fail_msg("%s: layer %d %dx%d: pixel %zu channel %zu: host %u cuda %u", what, v->layer,
                     v->w, v->h, i / 4, i % 4, want[i], got[i]);
    free(want);
    free(got);
}

static void test_compose_matches_host(void **state)
{
    (void)state;
    hz_rng rng = {4242};
    const int fw = 97, fh = 61;
    int64_t cells = fw * fh;
    sim_scenario sc = world(fw, fh, SIM_BOUNDARY_WALL, 3);
    float *f = malloc((size_t)cells * sizeof *f);
    uint8_t *occ = malloc((size_t)cells);
    uint32_t *agents = malloc(400 * sizeof *agents);
    assert_non_null(f);
    assert_non_null(occ);
    assert_non_null(agents);
    fill_field(f, cells, &rng);
    f[5] = 1e6f; /* a clear maximum */
    int n = 0;
    memset(occ, 0, (size_t)cells);
    while (n < 400) {
        uint32_t c = (uint32_t)hz_below(&rng, (uint64_t)cells);
        if (!occ[c]) {
            occ[c] = 1;
            agents[n++] = c;
        }
    }
    sim *g = create_state(&sc, gpu_cuda_backend(), f, agents, n);
    static const int sizes[][2] = {{97, 61}, {1024, 644}, {50, 50}, {333, 17}, {7, 400}};
    static const float ranges[] = {0.0f, 3.5f};
    for (int s = 0; s < 5; s++)
        for (int layer = 0; layer < 3; layer++)
            for (int ri = 0; ri < 2; ri++) {
                sim_view v;
                render_view_init(&v, (s + layer) % SIM_CMAP_COUNT, ranges[ri]);
                render_view_fit(&v, fw, fh, sizes[s][0], sizes[s][1]);
                v.layer = layer;
                compose_case(g, f, occ, fw, fh, &v, "fit");
            }
    /* A zoomed, shifted view that leaves the world on two sides. */
    sim_view v;
    render_view_init(&v, SIM_CMAP_MAGMA, 0.0f);
    v.w = 300;
    v.h = 200;
    v.x0 = -13.25;
    v.y0 = 40.5;
    v.scale = 0.173;
    compose_case(g, f, occ, fw, fh, &v, "zoom");
    v.layer = SIM_LAYER_HORIZON;
    uint8_t *px = malloc(300 * 200 * 4);
    assert_non_null(px);
    assert_int_equal(sim_compose(g, &v, px), SIM_EINVAL);
    free(px);
    sim_destroy(g);
    free(f);
    free(occ);
    free(agents);
}

int main(void)
{
    char why[256];
    if (gpu_probe(why, sizeof why) <= 0) {
        printf("test_gpu_horizon: skipped: %s\n", why);
        return 77;
    }
    quick = getenv("HZ_GPU_QUICK") != NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sums_vs_brute),
        cmocka_unit_test(test_sums_saturated),
        cmocka_unit_test(test_sums_many_tiles),
        cmocka_unit_test(test_sums_crowded),
        cmocka_unit_test(test_paint_matches_cpu),
        cmocka_unit_test(test_compose_matches_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
