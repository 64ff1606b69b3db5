/* test_diffuse.c - the CPU Jacobi sweep: against a sweep written here over an array with an
 * explicit ghost ring (every boundary kind, bit for bit), conservation of the total under
 * periodic and wall boundaries, convergence to the analytic linear profile between two fixed
 * edges, decay, and independence of the OpenMP thread count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>
#include <omp.h>

#include "hz_test_util.h"
#include "sim_diffuse.h"

static sim_scenario scenario(int w, int h, int boundary, float a)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = w;
    sc.height = h;
    sc.boundary = boundary;
    sc.diffusion = a;
    return sc;
}

static float *random_field(int w, int h, uint64_t seed, float lo, float hi)
{
    hz_rng r = {seed};
    float *f = malloc((size_t)w * h * sizeof *f);
    assert_non_null(f);
    for (size_t i = 0; i < (size_t)w * h; i++)
        f[i] = hz_uniform(&r, lo, hi);
    return f;
}

/* The reference sweep: copy src into a (w+2) x (h+2) array, fill the ghost ring by the boundary
 * rule (periodic: the opposite edge; wall: the cell itself; fixed: the edge's value), then apply
 * T' = (1-a)T + a*((N+S)+(E+W))/4 in float, in that order (the README's formula). */
static float ref_sweep(const sim_scenario *sc, const float *src, float *dst)
{
    const int w = sc->width, h = sc->height, W = w + 2;
    float *g = calloc((size_t)W * (h + 2), sizeof *g);
    assert_non_null(g);
#define G(x, y) g[(size_t)((y) + 1) * W + (x) + 1]
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            G(x, y) = src[(size_t)y * w + x];
    for (int x = 0; x < w; x++) {
        switch (sc->boundary) {
        case SIM_BOUNDARY_PERIODIC: G(x, -1) = G(x, h - 1); G(x, h) = G(x, 0); break;
        case SIM_BOUNDARY_WALL: G(x, -1) = G(x, 0); G(x, h) = G(x, h - 1); break;
        default: G(x, -1) = sc->fixed_top; G(x, h) = sc->fixed_bottom; break;
        }
    }
    for (int y = 0; y < h; y++) {
        switch (sc->boundary) {
        case SIM_BOUNDARY_PERIODIC: G(-1, y) = G(w - 1, y); G(w, y) = G(0, y); break;
        case SIM_BOUNDARY_WALL: G(-1, y) = G(0, y); G(w, y) = G(w - 1, y); break;
        default: G(-1, y) = sc->fixed_left; G(w, y) = sc->fixed_right; break;
        }
    }
    const float a = sc->diffusion, keep = 1.0f - a;
    float res = 0.0f;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float nb = ((G(x, y - 1) + G(x, y + 1)) + (G(x + 1, y) + G(x - 1, y))) * 0.25f;
            float v = keep * G(x, y) + a * nb;
            dst[(size_t)y * w + x] = v;
            float d = fabsf(v - G(x, y));
            if (d > res)
                res = d;
        }
#undef G
    free(g);
    return res;
}

static void test_matches_ghost_ring_reference(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1, 1},  {1, 9},  {13, 1}, {2, 2},
                                   {37, 23}, {64, 64}, {18, 3}, {19, 4}, {100, 7}};
    static const float as[] = {1.0f, 0.5f, 0.123f};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int b = 0; b < 3; b++)
            for (size_t k = 0; k < sizeof as / sizeof as[0]; k++) {
                int w = sizes[s][0], h = sizes[s][1];
                sim_scenario sc = scenario(w, h, b, as[k]);
                sc.fixed_top = 100.0f;
                sc.fixed_bottom = -3.0f;
                sc.fixed_left = 7.5f;
                sc.fixed_right = 0.25f;
                float *src = random_field(w, h, 11 + s, -10.0f, 50.0f);
                float *got = malloc((size_t)w * h * sizeof *got);
                float *want = malloc((size_t)w * h * sizeof *want);
                assert_non_null(got);
                assert_non_null(want);
                for (int it = 0; it < 3; it++) {
                    float r1 = sim_diffuse_sweep(&sc, src, got, 1);
                    float r2 = ref_sweep(&sc, src, want);
                    if (memcmp(got, want, (size_t)w * h * sizeof *got) != 0)
                        fail_msg("%dx%d %s a=%g: sweep %d differs from the reference", w, h,
                                 sim_boundary_name(b), (double)as[k], it);
                    assert_true(r1 == r2);
                    assert_true(sim_diffuse_sweep(&sc, src, got, 0) == 0.0f);
                    memcpy(src, want, (size_t)w * h * sizeof *src);
                }
                free(src);
                free(got);
                free(want);
            }
}

/* Periodic and wall boundaries move the field around but never create or lose any of it. */
static void test_conservation(void **state)
{
    (void)state;
    static const int sizes[][2] = {{96, 80}, {1, 50}, {50, 1}, {7, 3}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int b = SIM_BOUNDARY_PERIODIC; b <= SIM_BOUNDARY_WALL; b++) {
            int w = sizes[s][0], h = sizes[s][1];
            size_t n = (size_t)w * h;
            sim_scenario sc = scenario(w, h, b, 0.7f);
            float *f = random_field(w, h, 100 + s, 0.0f, 10.0f);
            float *g = malloc(n * sizeof *g);
            assert_non_null(g);
            /* a few spikes so that there is something to move */
            f[0] += 1000.0f;
            f[n / 2] += 500.0f;
            double before = 0.0, after = 0.0;
            for (size_t i = 0; i < n; i++)
                before += f[i];
            for (int it = 0; it < 100; it++) {
                sim_diffuse_sweep(&sc, f, g, 0);
                float *t = f;
                f = g;
                g = t;
            }
            for (size_t i = 0; i < n; i++)
                after += f[i];
            if (fabs(after - before) > 1e-5 * fabs(before))
                fail_msg("%dx%d %s: total %.9g -> %.9g", w, h, sim_boundary_name(b), before,
                         after);
            free(f);
            free(g);
        }
}

/* Runs `sweeps` sweeps from zero and returns the field. */
static float *relax(const sim_scenario *sc, int sweeps)
{
    size_t n = (size_t)sc->width * sc->height;
    float *f = calloc(n, sizeof *f), *g = calloc(n, sizeof *g);
    assert_non_null(f);
    assert_non_null(g);
    for (int it = 0; it < sweeps; it++) {
        sim_diffuse_sweep(sc, f, g, 0);
        float *t = f;
        f = g;
        g = t;
    }
    free(g);
    return f;
}

/* A wide strip between a hot top (100) and a cold bottom (0): away from the side edges the
 * steady state is the 1D solution, linear from the top ghost row to the bottom one:
 * T(y) = 100 (h - y) / (h + 1). Likewise a tall strip between a hot left and a cold right. */
static void test_fixed_linear_profile(void **state)
{
    (void)state;
    static const float as[] = {1.0f, 0.5f};
    for (size_t k = 0; k < 2; k++) {
        const int h = 8, w = 256;
        sim_scenario sc = scenario(w, h, SIM_BOUNDARY_FIXED, as[k]);
        sc.fixed_top = 100.0f;
        float *f = relax(&sc, 2500);
        for (int y = 0; y < h; y++)
            for (int x = 96; x < 160; x++) {
                double want = 100.0 * (h - y) / (h + 1);
                double got = f[(size_t)y * w + x];
                if (fabs(got - want) > 1e-3)
                    fail_msg("a=%g (%d,%d): %.6f, expected %.6f", (double)as[k], x, y, got,
                             want);
            }
        free(f);

        sim_scenario tall = scenario(h, w, SIM_BOUNDARY_FIXED, as[k]);
        tall.fixed_left = 100.0f;
        tall.fixed_right = -20.0f;
        f = relax(&tall, 2500);
        for (int y = 96; y < 160; y++)
            for (int x = 0; x < h; x++) {
                double want = 100.0 + (-20.0 - 100.0) * (x + 1) / (h + 1);
                double got = f[(size_t)y * h + x];
                if (fabs(got - want) > 1e-3)
                    fail_msg("tall a=%g (%d,%d): %.6f, expected %.6f", (double)as[k], x, y,
                             got, want);
            }
        free(f);
    }
}

/* The residual of the last sweep shrinks as the fixed-boundary problem converges. */
static void test_residual_decreases(void **state)
{
    (void)state;
    sim_scenario sc = scenario(30, 20, SIM_BOUNDARY_FIXED, 1.0f);
    sc.fixed_top = 100.0f;
    size_t n = 600;
    float *f = calloc(n, sizeof *f), *g = calloc(n, sizeof *g);
    assert_non_null(f);
    assert_non_null(g);
    float first = sim_diffuse_sweep(&sc, f, g, 1);
    assert_true(first == 25.0f); /* the top row gets a quarter of 100 */
    float last = first;
    for (int it = 0; it < 2000; it++) {
        last = sim_diffuse_sweep(&sc, g, f, 1);
        float *t = f;
        f = g;
        g = t;
    }
    assert_true(last < 1e-4f);
    free(f);
    free(g);
}

static void test_decay(void **state)
{
    (void)state;
    sim_scenario sc = scenario(33, 17, SIM_BOUNDARY_PERIODIC, 0.5f);
    sc.decay = 0.02f;
    float *f = random_field(33, 17, 5, -5.0f, 5.0f);
    float *want = malloc(33 * 17 * sizeof *want);
    assert_non_null(want);
    const float keep = 1.0f - 0.02f;
    for (int i = 0; i < 33 * 17; i++)
        want[i] = f[i] * keep;
    sim_diffuse_decay(&sc, f);
    assert_memory_equal(f, want, 33 * 17 * sizeof *f);
    free(f);
    free(want);
}

/* 1 thread and 2 threads give the same bits (sweeps and residual), every boundary. */
static void test_threads_identical(void **state)
{
    (void)state;
    const int w = 301, h = 203;
    size_t n = (size_t)w * h;
    for (int b = 0; b < 3; b++) {
        sim_scenario sc = scenario(w, h, b, 0.6f);
        sc.fixed_top = 3.0f;
        sc.fixed_left = -1.0f;
        sc.decay = 0.01f;
        float *out[2];
        float res[2];
        for (int t = 0; t < 2; t++) {
            omp_set_num_threads(t + 1);
            float *f = random_field(w, h, 42, 0.0f, 100.0f), *g = malloc(n * sizeof *g);
            assert_non_null(g);
            for (int it = 0; it < 20; it++) {
                res[t] = sim_diffuse_sweep(&sc, f, g, 1);
                sim_diffuse_decay(&sc, g);
                float *tmp = f;
                f = g;
                g = tmp;
            }
            free(g);
            out[t] = f;
        }
        assert_memory_equal(out[0], out[1], n * sizeof(float));
        assert_true(res[0] == res[1]);
        free(out[0]);
        free(out[1]);
    }
    omp_set_num_threads(2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_ghost_ring_reference),
        cmocka_unit_test(test_conservation),
        cmocka_unit_test(test_fixed_linear_profile),
        cmocka_unit_test(test_residual_decreases),
        cmocka_unit_test(test_decay),
        cmocka_unit_test(test_threads_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
