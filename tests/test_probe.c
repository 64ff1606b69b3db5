/* test_probe.c - the viewer's reads on the CPU backend (sim_region_sums, sim_read_cells,
 * sim_agent_cells) and the routine under the first (sim_horizon_region), against naive oracles:
 * every region sum against sim_horizon_disk_brute (and the prefix-row sim_horizon_disk) for
 * periodic and bounded grids, odd sizes, disks wider than the world, r = 0, 1, 8, 40, dense and
 * sparse samples and several thread counts; the probes against sim_read_field / sim_read_agents;
 * and the refusals (SIM_EINVAL) of bad arguments and of a table without the reads. */
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
#include "sim.h"
#include "sim_alloc.h"
#include "sim_horizon.h"

static const int radii[] = {0, 1, 8, 40};
enum { NRADII = 4 };

/* Sample patterns along an axis of n cells: every cell, one cell, the two ends, a random
 * strictly increasing subset (about one in three, at least one). Returns the count. */
static int samples(int pattern, int n, hz_rng *rng, int32_t *out)
{
    int k = 0;
    switch (pattern) {
    case 0:
        for (int i = 0; i < n; i++)
            out[k++] = i;
        break;
    case 1:
        out[k++] = (int32_t)hz_below(rng, (uint64_t)n);
        break;
    case 2:
        out[k++] = 0;
        if (n > 1)
            out[k++] = n - 1;
        break;
    default:
        for (int i = 0; i < n; i++)
            if (hz_below(rng, 3) == 0)
                out[k++] = i;
        if (k == 0)
            out[k++] = n / 2;
        break;
    }
    return k;
}
enum { NPATTERNS = 4 };

/* A field with values of both signs, some beyond the fixed-point clamp and some NaN, so that
 * every branch of sim_fix is summed. */
static void fill_field(float *f, int64_t cells, hz_rng *rng)
{
    for (int64_t i = 0; i < cells; i++) {
        uint64_t k = hz_below(rng, 50);
        f[i] = k == 0 ? NAN : k == 1 ? 5000.0f : k == 2 ? -3000.0f : hz_uniform(rng, -3.0f, 9.0f);
    }
}

/* The brute-force disk sum of every cell (w * h, malloc'ed), each also checked against the
 * prefix-row sim_horizon_disk: computed once per field and radius, then every sample pattern of
 * that field is looked up in it. */
static int64_t *brute_table(const float *field, int w, int h, int periodic, int r)
{
    int64_t *want = malloc((size_t)w * h * sizeof *want);
    int64_t *prefix = malloc((size_t)(w + 1) * (size_t)h * sizeof *prefix);
    assert_true(want && prefix);
    sim_horizon_prefix(field, w, h, prefix);
    sim_disk d;
    sim_disk_init(&d, r);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int64_t b = sim_horizon_disk_brute(field, w, h, periodic, r, x, y);
            int64_t f = sim_horizon_disk(prefix, w, h, periodic, &d, x, y);
            if (b != f)
                fail_msg("%dx%d r=%d at (%d, %d): brute %lld prefix %lld", w, h, r, x, y,
                         (long long)b, (long long)f);
            want[(size_t)y * w + x] = b;
        }
    free(prefix);
    return want;
}

/* Checks out (nx x ny) against the brute-force table; `what` names the case. */
static void expect_region(const int64_t *want, int w, int h, int periodic, int r,
                          const int32_t *xs, int nx, const int32_t *ys, int ny,
                          const int64_t *out, const char *what)
{
    for (int iy = 0; iy < ny; iy++)
        for (int ix = 0; ix < nx; ix++) {
            int64_t b = want[(size_t)ys[iy] * w + xs[ix]];
            int64_t got = out[(size_t)iy * nx + ix];
            if (got != b)
                fail_msg("%s: %dx%d %s r=%d at (%d, %d): region %lld brute %lld", what, w, h,
                         periodic ? "periodic" : "bounded", r, xs[ix], ys[iy], (long long)got,
                         (long long)b);
        }
}

static void test_region_routine_oracle(void **state)
{
    (void)state;
    static const int sizes[][2] = {{37, 23}, {5, 5}, {1, 1}, {64, 3}, {3, 61}, {2, 9}};
    static const int threads[] = {1, 2, 7};
    hz_rng rng = {0x9e3779b97f4a7c15ull};
    for (int si = 0; si < 6; si++) {
        const int w = sizes[si][0], h = sizes[si][1];
        float *field = malloc((size_t)w * h * sizeof *field);
        int32_t *xs = malloc((size_t)w * sizeof *xs), *ys = malloc((size_t)h * sizeof *ys);
        int64_t *out = malloc((size_t)w * h * sizeof *out);
        assert_true(field && xs && ys && out);
        fill_field(field, (int64_t)w * h, &rng);
        for (int ri = 0; ri < NRADII; ri++)
            for (int periodic = 0; periodic <= 1; periodic++) {
                const int r = radii[ri];
                int64_t *want = brute_table(field, w, h, periodic, r);
                for (int p = 0; p < NPATTERNS * NPATTERNS; p++) {
                    const int t = threads[p % 3];
                    int nx = samples(p % NPATTERNS, w, &rng, xs);
                    int ny = samples(p / NPATTERNS, h, &rng, ys);
                    /* Exactly the entries asked for, and a guard after them that must stay. */
                    size_t len = sim_horizon_region_scratch_len(r, xs, nx, t);
                    int64_t *scratch = malloc((len + 8) * sizeof *scratch);
                    assert_non_null(scratch);
                    for (int g = 0; g < 8; g++)
                        scratch[len + g] = 0x5a5a5a5a5a5a5a5all;
                    memset(out, 0xa5, (size_t)nx * ny * sizeof *out);
                    sim_horizon_region(field, w, h, periodic, r, xs, nx, ys, ny, out, scratch,
                                       t);
                    for (int g = 0; g < 8; g++)
                        assert_true(scratch[len + g] == 0x5a5a5a5a5a5a5a5all);
                    expect_region(want, w, h, periodic, r, xs, nx, ys, ny, out, "routine");
                    free(scratch);
                }
                free(want);
            }
        free(field);
        free(xs);
        free(ys);
        free(out);
    }
}

static sim *make(int w, int h, int boundary, int r, double density, int steps)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = w;
    sc.height = h;
    sc.boundary = boundary;
    sc.radius = r;
    sc.count = -1;
    sc.density = density;
    sc.seed = 1234 + (uint64_t)r;
    sc.init_noise = 0.5f;
    sim *s = NULL;
    sim_err err = {{0}};
    if (sim_create(&sc, sim_cpu_backend(), 2, &s, &err) != SIM_OK)
        fail_msg("create %dx%d: %s", w, h, err.msg);
    for (int k = 0; k < steps; k++) {
        sim_stats st;
        if (sim_step(s, 0, &st) != SIM_OK)
            fail_msg("step %d: %s", k, sim_errmsg(s));
    }
    return s;
}

static float *read_field(sim *s)
{
    const sim_scenario *sc = sim_get_scenario(s);
    float *f = malloc((size_t)sc->width * sc->height * sizeof *f);
    assert_non_null(f);
    assert_int_equal(sim_read_field(s, f), SIM_OK);
    return f;
}

static void test_region_sums_cpu(void **state)
{
    (void)state;
    static const int sizes[][2] = {{37, 23}, {5, 5}};
    static const int boundaries[] = {SIM_BOUNDARY_PERIODIC, SIM_BOUNDARY_WALL,
                                     SIM_BOUNDARY_FIXED};
    hz_rng rng = {77};
    for (int si = 0; si < 2; si++)
        for (int bi = 0; bi < 3; bi++)
            for (int ri = 0; ri < NRADII; ri++) {
                const int w = sizes[si][0], h = sizes[si][1], r = radii[ri];
                sim *s = make(w, h, boundaries[bi], r, 0.3, 3);
                /* A brush after the step: the sums must follow the field as it is now. */
                assert_int_equal(sim_paint(s, w / 3, h / 2, 2, 1.75f), SIM_OK);
                float *field = read_field(s);
                const int periodic = boundaries[bi] == SIM_BOUNDARY_PERIODIC;
                int64_t *want = brute_table(field, w, h, periodic, r);
                int32_t xs[64], ys[64];
                int64_t out[64 * 64];
                for (int p = 0; p < NPATTERNS * NPATTERNS; p++) {
                    int nx = samples(p % NPATTERNS, w, &rng, xs);
                    int ny = samples(p / NPATTERNS, h, &rng, ys);
                    if (sim_region_sums(s, xs, nx, ys, ny, out) != SIM_OK)
                        fail_msg("region_sums: %s", sim_errmsg(s));
                    expect_region(want, w, h, periodic, r, xs, nx, ys, ny, out,
                                  "sim_region_sums");
                }
                free(want);
                free(field);
                sim_destroy(s);
            }
}

/* The expected agent on every cell, from sim_read_agents. */
static int64_t *agent_map(sim *s, uint32_t **cells_out)
{
    const sim_scenario *sc = sim_get_scenario(s);
    int64_t cells = (int64_t)sc->width * sc->height, n = sim_agent_count(s);
    int64_t *map = malloc((size_t)cells * sizeof *map);
    uint32_t *pos = malloc((size_t)(n + 1) * sizeof *pos);
    assert_true(map && pos);
    assert_int_equal(sim_read_agents(s, pos), SIM_OK);
    for (int64_t c = 0; c < cells; c++)
        map[c] = -1;
    for (int64_t i = 0; i < n; i++)
        map[pos[i]] = i;
    *cells_out = pos;
    return map;
}

static void test_read_cells_and_agent_cells_cpu(void **state)
{
    (void)state;
    static const double densities[] = {0.0, 0.05, 0.6, 1.0};
    hz_rng rng = {4242};
    for (int di = 0; di < 4; di++) {
        sim *s = make(37, 23, SIM_BOUNDARY_WALL, 3, densities[di], 4);
        const int64_t cells = 37 * 23, n = sim_agent_count(s);
        float *field = read_field(s);
        uint32_t *pos;
        int64_t *map = agent_map(s, &pos);
        /* Every cell in order, then random cells with repeats. */
        uint32_t q[2 * 37 * 23];
        int64_t nq = 0;
        for (int64_t c = 0; c < cells; c++)
            q[nq++] = (uint32_t)c;
        for (int k = 0; k < 300; k++)
            q[nq++] = (uint32_t)hz_below(&rng, (uint64_t)cells);
        float values[2 * 37 * 23];
        int64_t agents[2 * 37 * 23];
        assert_int_equal(sim_read_cells(s, q, nq, values, agents), SIM_OK);
        for (int64_t i = 0; i < nq; i++) {
            assert_memory_equal(&values[i], &field[q[i]], sizeof(float));
            assert_int_equal(agents[i], map[q[i]]);
        }
        assert_int_equal(sim_read_cells(s, q, 0, NULL, NULL), SIM_OK);
        /* Every agent, then a few in random order. */
        int64_t ids[37 * 23 + 5];
        uint32_t got[37 * 23 + 5];
        int64_t ni = 0;
        for (int64_t i = 0; i < n; i++)
            ids[ni++] = n - 1 - i;
        for (int k = 0; k < 5 && n > 0; k++)
            ids[ni++] = (int64_t)hz_below(&rng, (uint64_t)n);
        assert_int_equal(sim_agent_cells(s, ids, ni, got), SIM_OK);
        for (int64_t i = 0; i < ni; i++)
            assert_int_equal(got[i], pos[ids[i]]);
        assert_int_equal(sim_agent_cells(s, ids, 0, NULL), SIM_OK);
        free(field);
        free(pos);
        free(map);
        sim_destroy(s);
    }
}

static void expect_einval(sim *s, int rc, const char *needle)
{
    assert_int_equal(rc, SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), needle);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    sim *s = make(37, 23, SIM_BOUNDARY_PERIODIC, 8, 0.1, 1);
    const int64_t n = sim_agent_count(s);
    int64_t out[16];
    const int32_t xs[] = {1, 5, 9}, ys[] = {0, 22};
    const int32_t unsorted[] = {1, 9, 5}, dup[] = {4, 4}, neg[] = {-1, 3}, wide[] = {3, 37},
                  tall[] = {2, 23};
    expect_einval(s, sim_region_sums(s, unsorted, 3, ys, 2, out), "xs[2] = 5 after xs[1] = 9");
    expect_einval(s, sim_region_sums(s, dup, 2, ys, 2, out), "strictly increasing");
    expect_einval(s, sim_region_sums(s, neg, 2, ys, 2, out), "xs[0] = -1 outside [0, 37)");
    expect_einval(s, sim_region_sums(s, wide, 2, ys, 2, out), "xs[1] = 37 outside [0, 37)");
    expect_einval(s, sim_region_sums(s, xs, 3, tall, 2, out), "ys[1] = 23 outside [0, 23)");
    expect_einval(s, sim_region_sums(s, xs, 3, dup, 2, out), "ys[1] = 4 after ys[0] = 4");
    expect_einval(s, sim_region_sums(s, xs, 0, ys, 2, out), "nx = 0");
    expect_einval(s, sim_region_sums(s, xs, 3, ys, -2, out), "ny = -2");
    expect_einval(s, sim_region_sums(s, NULL, 3, ys, 2, out), "xs is NULL");
    expect_einval(s, sim_region_sums(s, xs, 3, ys, 2, NULL), "NULL output");
    assert_int_equal(sim_region_sums(s, xs, 3, ys, 2, out), SIM_OK);

    const uint32_t cells[] = {0, 37 * 23 - 1, 37 * 23};
    float values[3];
    int64_t agents[3];
    expect_einval(s, sim_read_cells(s, cells, 3, values, agents),
                  "cells[2] = 851 outside [0, 851)");
    expect_einval(s, sim_read_cells(s, cells, -1, values, agents), "-1 cells");
    expect_einval(s, sim_read_cells(s, cells, 2, NULL, agents), "NULL");
    expect_einval(s, sim_read_cells(s, NULL, 2, values, agents), "NULL");
    assert_int_equal(sim_read_cells(s, cells, 2, values, agents), SIM_OK);

    int64_t ids[] = {0, n - 1, n, -1};
    uint32_t got[4];
    char want[64];
    snprintf(want, sizeof want, "ids[2] = %lld outside [0, %lld)", (long long)n, (long long)n);
    expect_einval(s, sim_agent_cells(s, ids, 3, got), want);
    ids[2] = -1;
    expect_einval(s, sim_agent_cells(s, ids, 3, got), "ids[2] = -1");
    expect_einval(s, sim_agent_cells(s, ids, -3, got), "-3 ids");
    expect_einval(s, sim_agent_cells(s, ids, 2, NULL), "NULL");
    assert_int_equal(sim_agent_cells(s, ids, 2, got), SIM_OK);
    sim_destroy(s);

    /* No agents: every id is out of range, every cell empty. */
    s = make(5, 5, SIM_BOUNDARY_WALL, 1, 0.0, 1);
    int64_t zero = 0;
    expect_einval(s, sim_agent_cells(s, &zero, 1, got), "outside [0, 0)");
    assert_int_equal(sim_read_cells(s, cells, 1, values, agents), SIM_OK);
    assert_int_equal(agents[0], -1);
    sim_destroy(s);
}

/* The region's scratch comes through sim_alloc: its failure is SIM_ENOMEM, and the next call
 * works. */
static void test_region_out_of_memory(void **state)
{
    (void)state;
    sim *s = make(37, 23, SIM_BOUNDARY_PERIODIC, 8, 0.1, 1);
    const int32_t xs[] = {1, 5, 9}, ys[] = {0, 22};
    int64_t out[6];
    sim_alloc_fail_at(1);
    assert_int_equal(sim_region_sums(s, xs, 3, ys, 2, out), SIM_ENOMEM);
    hz_assert_contains(sim_errmsg(s), "out of memory");
    sim_alloc_fail_at(0);
    assert_int_equal(sim_region_sums(s, xs, 3, ys, 2, out), SIM_OK);
    sim_destroy(s);
}

static void test_table_needs_the_reads(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = 9;
    sc.height = 7;
    static const char *names[] = {"region_sums", "read_cells", "agent_cells"};
    for (int k = 0; k < 3; k++) {
        sim_backend_ops ops = *sim_cpu_backend();
        if (k == 0)
            ops.region_sums = NULL;
        else if (k == 1)
            ops.read_cells = NULL;
        else
            ops.agent_cells = NULL;
        sim *s = NULL;
        sim_err err = {{0}};
        assert_int_equal(sim_create(&sc, &ops, 1, &s, &err), SIM_EINVAL);
        assert_null(s);
        char want[64];
        snprintf(want, sizeof want, "has no %s", names[k]);
        hz_assert_contains(err.msg, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_region_routine_oracle),
        cmocka_unit_test(test_region_sums_cpu),
        cmocka_unit_test(test_read_cells_and_agent_cells_cpu),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_region_out_of_memory),
        cmocka_unit_test(test_table_needs_the_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
