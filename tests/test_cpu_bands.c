/* test_cpu_bands.c - the CPU backend's bands: the agents' phase splits the rows among threads,
 * moves what is safe inside each band while it senses and the band edges after a barrier
 * (sim_cpu.c). Checks that any split gives the same bits: checksums of every step with 1, 2,
 * 3 and 6 threads on worlds whose bands are 1 to 45 rows high, split by the threads' speed
 * (balance()) and at random every step (sim_cpu_scramble_bands), dense and sparse agents (the
 * dense rows and the per-agent sums), all three boundaries; and that the agent cells read back
 * (rebuilt from the occupancy) are distinct and agree with read_cells. The statistics' column
 * sums take two ways with several threads (band_stats): the bands' own sums added where
 * sim_colsum_exact holds, the rows in order where it does not; a world whose noise of 10^-30
 * spreads its first steps' cells over ~100 binades takes both, checked from the fields. The
 * band's rows' statistics are taken in blocks by the last sweep or after the sweeps: 0 to 3
 * sweeps on a world wide enough for several blocks a band. The runs with several threads step in
 * batches, so that a step's statistics are also finished by the next step's region, and a spot
 * painted in makes the guess that they may be fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim.h"
#include "sim_backend.h"
#include "sim_impl.h"
#include "sim_rules.h"

enum { STEPS = 14 };

/* Steps whose statistics the runs with several threads ask for (the one thread's: all). */
static int wanted(int k)
{
    return k % 5 != 3;
}

/* Whether the w x h field's column sums may be added in any order (sim_colsum_exact of its
 * magnitudes: the largest, and 2^32 minus the smallest nonzero one). */
static int field_exact(const float *f, int w, int h)
{
    uint32_t hi = 0u, lo = 0u;
    for (int64_t i = 0; i < (int64_t)w * h; i++) {
        uint32_t m;
        memcpy(&m, &f[i], sizeof m);
        m &= 0x7fffffffu;
        hi = m > hi ? m : hi;
        if (m && 0u - m > lo)
            lo = 0u - m;
    }
    return sim_colsum_exact(hi, lo, h);
}

/* scramble: not 0, the bands are split at random every step (sim_cpu_scramble_bands). exact
 * (not NULL): step by step, and after each step field_exact of the field; else in batches of 1
 * to 5 steps (every step of a batch but its last may leave its statistics to the next: sim_cpu.c)
 * with the statistics of the wanted() steps. paint: not 0, a spot of 10^9 painted into the field
 * (sim_paint) after that step, where a batch ends. */
static void run(const sim_scenario *sc, int threads, uint64_t scramble, sim_stats *out,
                int *exact, int paint)
{
    float *field = malloc((size_t)sc->width * (size_t)sc->height * sizeof *field);
    assert_non_null(field);
    sim *s = NULL;
    sim_err err = {{0}};
    if (sim_create(sc, sim_cpu_backend(), threads, &s, &err) != SIM_OK)
        fail_msg("sim_create: %s", err.msg);
    if (scramble)
        sim_cpu_scramble_bands(sim_get_backend_state(s), scramble);
    static const int sizes[] = {3, 1, 4, 2, 5};
    uint8_t want[STEPS];
    for (int k = 0; k < STEPS; k++)
        want[k] = exact ? 1 : (uint8_t)wanted(k);
    for (int k = 0, j = 0; k < STEPS; j++) {
        int n = exact ? 1 : sizes[j % 5];
        n = k + n > STEPS ? STEPS - k : n;
        n = paint > k && k + n > paint ? paint - k : n;
        /* each batch's rows in a buffer of garbage, as a caller that reuses one */
        sim_stats rows[5];
        memset(rows, 0xa5, sizeof rows);
        if (sim_step_batch(s, n, want + k, rows) != SIM_OK)
            fail_msg("sim_step_batch: %s", sim_errmsg(s));
        memcpy(out + k, rows, (size_t)n * sizeof *rows);
        k += n;
        if (exact) {
            assert_int_equal(sim_read_field(s, field), SIM_OK);
            exact[k - 1] = field_exact(field, sc->width, sc->height);
        }
        if (paint && k == paint &&
            sim_paint(s, sc->width / 3, sc->height / 2, 2, 1e9f) != SIM_OK)
            fail_msg("sim_paint: %s", sim_errmsg(s));
    }
    free(field);
    /* Agent cells: distinct, and each holds its agent. */
    int64_t n = sim_agent_count(s);
    if (n > 0) {
        uint32_t *cells = malloc((size_t)n * sizeof *cells);
        float *values = malloc((size_t)n * sizeof *values);
        int64_t *agents = malloc((size_t)n * sizeof *agents);
        assert_non_null(cells);
        assert_non_null(values);
        assert_non_null(agents);
        assert_int_equal(sim_read_agents(s, cells), SIM_OK);
        assert_int_equal(sim_read_cells(s, cells, n, values, agents), SIM_OK);
        for (int64_t i = 0; i < n; i++)
            if (agents[i] != i)
                fail_msg("agent %lld: its cell %u holds %lld", (long long)i, cells[i],
                         (long long)agents[i]);
        free(agents);
        free(values);
        free(cells);
    }
    sim_destroy(s);
}

/* The wanted() steps' statistics with 2, 3 and 6 threads (bands split by speed and at random)
 * equal to one thread's; exact (not NULL): field_exact of the one thread's fields; paint as
 * run's. */
static void check_painted(const sim_scenario *sc, int *exact, int paint)
{
    const int w = sc->width, h = sc->height, r = sc->radius, boundary = sc->boundary;
    const double density = sc->density;
    static const int threads[] = {1, 2, 3, 6};
    sim_stats ref[STEPS], got[STEPS];
    run(sc, 1, 0, ref, exact, paint);
    for (size_t t = 1; t < sizeof threads / sizeof threads[0]; t++)
        for (uint64_t scramble = 0; scramble < 3; scramble++) {
            run(sc, threads[t], scramble * 0x9E3779B97F4A7C15ull, got, NULL, paint);
            for (int k = 0; k < STEPS; k++)
                if (got[k].moved != ref[k].moved ||
                    (wanted(k) && (got[k].checksum != ref[k].checksum ||
                    memcmp(&got[k].field_total, &ref[k].field_total, sizeof(double)) != 0 ||
                    memcmp(&got[k].field_max, &ref[k].field_max, sizeof(float)) != 0 ||
                    memcmp(&got[k].residual, &ref[k].residual, sizeof(float)) != 0)))
                    fail_msg("%dx%d r=%d density %.3f %s, %d threads, split %s, step %d: "
                             "checksum %016llx total %.17g max %.9g residual %.9g, 1 thread "
                             "%016llx %.17g %.9g %.9g",
                             w, h, r, density, sim_boundary_name(boundary), threads[t],
                             scramble ? "random" : "balanced", k + 1,
                             (unsigned long long)got[k].checksum, got[k].field_total,
                             (double)got[k].field_max, (double)got[k].residual,
                             (unsigned long long)ref[k].checksum, ref[k].field_total,
                             (double)ref[k].field_max, (double)ref[k].residual);
        }
}

static void check_sc(const sim_scenario *sc, int *exact)
{
    check_painted(sc, exact, 0);
}

static void check(int w, int h, int r, double density, int boundary)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = w;
    sc.height = h;
    sc.radius = r;
    sc.density = density;
    sc.boundary = boundary;
    sc.fixed_top = 2.0f;
    sc.noise = 0.2;
    sc.seed = 7;
    check_sc(&sc, NULL);
}

static void test_band_splits(void **state)
{
    (void)state;
    static const int shapes[][2] = {{40, 3}, {33, 8}, {50, 17}, {64, 40}, {120, 90}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int b = 0; b < 3; b++) {
            check(shapes[s][0], shapes[s][1], 3, 0.3, b);  /* dense rows */
            check(shapes[s][0], shapes[s][1], 5, 0.01, b); /* per-agent sums */
        }
}

/* A 64 x 48 world at r = 3 for the column sums' tests. */
static void sums_world(sim_scenario *sc, double density, uint64_t seed)
{
    sim_scenario_defaults(sc);
    sc->width = 64;
    sc->height = 48;
    sc->radius = 3;
    sc->density = density;
    sc->seed = seed;
}

/* The column sums both ways (band_stats): a noise of 10^-30 under deposits of 1 leaves the first
 * steps' fields over too many binades for sim_colsum_exact, and the diffusion brings the later
 * ones within it. */
static void test_column_sums_both_ways(void **state)
{
    (void)state;
    sim_scenario sc;
    sums_world(&sc, 0.2, 11);
    sc.init_noise = 1e-30f;
    int exact[STEPS], yes = 0;
    check_sc(&sc, exact);
    for (int k = 0; k < STEPS; k++)
        yes += exact[k] != 0;
    if (yes == 0 || yes == STEPS)
        fail_msg("%d of %d steps with sim_colsum_exact: both ways wanted", yes, STEPS);
}

/* The rows in order where the order changes the bits: a top edge held at 10^9, so that a
 * column's sum past its top rows is some 10^9 and its unit in the last place (2^-21 and more)
 * above the low bits of the cells of ~1 further down: in row order each of those additions
 * rounds, while a band of those rows adds them exactly and rounds once. Every step fails
 * sim_colsum_exact; the bands' sums added instead changed field_total. */
static void test_column_sums_in_order(void **state)
{
    (void)state;
    sim_scenario sc;
    sums_world(&sc, 0.1, 5);
    sc.boundary = SIM_BOUNDARY_FIXED;
    sc.fixed_top = 1e9f;
    int exact[STEPS];
    check_sc(&sc, exact);
    for (int k = 0; k < STEPS; k++)
        if (exact[k])
            fail_msg("step %d: sim_colsum_exact holds, the rows in order untested", k + 1);
}

/* A step's column sums left to the next step (sim_cpu.c), guessed to pass sim_colsum_exact from
 * the statistics before, when the guess fails: ten steps within it, then a spot of 10^9 painted
 * in (the bands' sums added in any order then change field_total), so the next step finds the
 * keys failing and takes the column sums in row order at once; the steps after it go by the
 * barrier's way (band_stats). */
static void test_column_sums_guess_fails(void **state)
{
    (void)state;
    enum { PAINT_AT = 10 };
    sim_scenario sc;
    sums_world(&sc, 0.1, 9);
    sc.init_noise = 1.0f;
    int exact[STEPS];
    check_painted(&sc, exact, PAINT_AT);
    for (int k = 0; k < STEPS; k++)
        if (exact[k] != (k < PAINT_AT))
            fail_msg("step %d: sim_colsum_exact %s, the guess's failure untested", k + 1,
                     exact[k] ? "holds" : "fails");
}

/* The statistics where the band's rows are taken: in blocks as the last sweep writes them
 * (sweep_rows_stats: 1,100 columns make blocks of 3 rows, several a band), or after the sweeps
 * where the last sweep is the one with the deposit (1 sweep) or there is none (0, with decay and
 * without); each with the column sums both ways (a noise of 10^-30, as above). */
static void test_statistics_in_the_sweep(void **state)
{
    (void)state;
    static const int sweeps[] = {0, 1, 2, 3};
    for (size_t k = 0; k < sizeof sweeps / sizeof sweeps[0]; k++)
        for (int tiny = 0; tiny < 2; tiny++) {
            sim_scenario sc;
            sums_world(&sc, 0.1, 3 + k);
            sc.width = 1100;
            sc.height = 40;
            sc.sweeps = sweeps[k];
            sc.decay = k == 0 && tiny ? 0.0f : 0.01f;
            if (tiny)
                sc.init_noise = 1e-30f;
            check_sc(&sc, NULL);
        }
}

/* Nearly full worlds: most claims meet other claims and occupied cells. */
static void test_crowded(void **state)
{
    (void)state;
    for (int b = 0; b < 3; b++)
        check(30, 24, 2, 0.9, b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_band_splits),
        cmocka_unit_test(test_crowded),
        cmocka_unit_test(test_column_sums_both_ways),
        cmocka_unit_test(test_column_sums_in_order),
        cmocka_unit_test(test_column_sums_guess_fails),
        cmocka_unit_test(test_statistics_in_the_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
