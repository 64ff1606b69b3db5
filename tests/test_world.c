/* test_world.c - the initial state: field values in [initial, initial + init_noise), agents on
 * distinct cells inside the grid (also when they fill it), centre placement, dependence on the
 * seed only, and sim_world_check_agents catching bad states. */
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
#include "sim_world.h"

typedef struct world {
    float *field;
    uint32_t *agents;
    int64_t n;
} world;

/* The initial state of sc on `threads` threads (0: all). */
static world make_on(const sim_scenario *sc, int threads)
{
    world wd;
    int64_t cells = (int64_t)sc->width * sc->height;
    wd.n = sim_scenario_agent_count(sc);
    wd.field = malloc((size_t)cells * sizeof *wd.field);
    wd.agents = malloc((size_t)(wd.n > 0 ? wd.n : 1) * sizeof *wd.agents);
    assert_non_null(wd.field);
    assert_non_null(wd.agents);
    sim_err err = {{0}};
    if (sim_world_init(sc, threads, wd.field, wd.agents, &err) != SIM_OK)
        fail_msg("%s", err.msg);
    return wd;
}

static world make(const sim_scenario *sc)
{
    return make_on(sc, 0);
}

/* The parallel shuffle (rounds of steps at once) against the steps one after another: whole
 * candidate arrays equal, for full and partial shuffles, two streams and seeds, several thread
 * counts, and sizes on both sides of the serial thresholds. */
static void test_parallel_shuffle(void **state)
{
    (void)state;
    static const int64_t cases[][2] = {{300000, 300000}, {300000, 279000}, {300000, 150000},
                                       {300000, 70000},  {2000000, 1860000}, {90000, 89999},
                                       {5000, 1000},     {1, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t n_cand = cases[c][0], n = cases[c][1];
        uint32_t *ref = malloc((size_t)n_cand * sizeof *ref);
        uint32_t *par = malloc((size_t)n_cand * sizeof *par);
        assert_non_null(ref);
        assert_non_null(par);
        for (uint32_t index = 0; index < 4; index += 3)
            for (uint64_t seed = 1; seed <= 2; seed++) {
                for (int64_t i = 0; i < n_cand; i++)
                    ref[i] = (uint32_t)(i * 7 + 3);
                for (int64_t i = 0; i < n; i++)
                    sim_world_pick(seed, index, ref, n_cand, i);
                for (int threads = 1; threads <= 4; threads++) {
                    for (int64_t i = 0; i < n_cand; i++)
                        par[i] = (uint32_t)(i * 7 + 3);
                    sim_world_shuffle(seed, index, par, n_cand, n, threads);
                    if (memcmp(ref, par, (size_t)n_cand * sizeof *ref) != 0)
                        fail_msg("shuffle of %lld in %lld (stream %u, seed %llu, %d threads) "
                                 "differs from the steps in order", (long long)n,
                                 (long long)n_cand, index, (unsigned long long)seed, threads);
                }
            }
        free(ref);
        free(par);
    }
}

static void release(world *wd)
{
    free(wd->field);
    free(wd->agents);
}

/* sim_world_init gives the same agents on 1 and 3 threads (the shuffle runs in rounds on 3). */
static void test_threads_same_world(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = 600;
    sc.height = 500;
    sc.density = 0.93;
    sc.count = -1;
    const int64_t cells = (int64_t)sc.width * sc.height;
    world one = make_on(&sc, 1), three = make_on(&sc, 3);
    assert_true(one.n > 200000);
    assert_int_equal(one.n, three.n);
    assert_memory_equal(one.agents, three.agents, (size_t)one.n * sizeof *one.agents);
    assert_memory_equal(one.field, three.field, (size_t)cells * sizeof *one.field);
    release(&one);
    release(&three);
}

/* Distinct and inside, checked here with a bitmap (not with the function under test). */
static void assert_distinct(const sim_scenario *sc, const world *wd)
{
    int64_t cells = (int64_t)sc->width * sc->height;
    uint8_t *seen = calloc((size_t)cells, 1);
    assert_non_null(seen);
    for (int64_t i = 0; i < wd->n; i++) {
        if ((int64_t)wd->agents[i] >= cells)
            fail_msg("agent %lld at cell %u of %lld", (long long)i, wd->agents[i],
                     (long long)cells);
        if (seen[wd->agents[i]]++)
            fail_msg("agent %lld shares cell %u", (long long)i, wd->agents[i]);
    }
    free(seen);
    sim_err err = {{0}};
    assert_int_equal(sim_world_check_agents(sc, wd->agents, wd->n, 0, &err), SIM_OK);
}

static void test_field_values(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = 97;
    sc.height = 61;
    sc.initial = -2.0f;
    sc.init_noise = 5.0f;
    world wd = make(&sc);
    double sum = 0.0;
    float lo = 1e30f, hi = -1e30f;
    for (int i = 0; i < 97 * 61; i++) {
        float v = wd.field[i];
        assert_true(v >= -2.0f && v < 3.0f);
        sum += v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    /* uniform: mean near the middle, and the range well covered */
    double mean = sum / (97 * 61);
    assert_true(fabs(mean - 0.5) < 0.1);
    assert_true(lo < -1.9f && hi > 2.9f);
    release(&wd);

    sc.init_noise = 0.0f;
    sc.initial = 7.25f;
    wd = make(&sc);
    for (int i = 0; i < 97 * 61; i++)
        assert_true(wd.field[i] == 7.25f);
    release(&wd);
}

static void test_agents_count_and_distinct(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = 50;
    sc.height = 40;
    static const double densities[] = {0.0, 0.0301, 0.5, 0.9996, 1.0};
    static const int64_t expect[] = {0, 60, 1000, 1999, 2000};
    for (int k = 0; k < 5; k++) {
        sc.count = -1;
        sc.density = densities[k];
        assert_int_equal(sim_scenario_agent_count(&sc), expect[k]);
        world wd = make(&sc);
        assert_distinct(&sc, &wd);
        release(&wd);
    }
    /* count overrides density; a full grid holds every cell once */
    sc.count = 2000;
    sc.density = 0.0;
    for (int p = SIM_PLACE_RANDOM; p <= SIM_PLACE_CENTER; p++) {
        sc.placement = p;
        world wd = make(&sc);
        assert_int_equal(wd.n, 2000);
        assert_distinct(&sc, &wd);
        release(&wd);
    }
}

/* Random placement spreads over the grid: every quadrant gets about a quarter. */
static void test_random_spread(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = 200;
    sc.height = 100;
    sc.count = 4000;
    world wd = make(&sc);
    int quad[4] = {0};
    for (int64_t i = 0; i < wd.n; i++) {
        int x = (int)(wd.agents[i] % 200), y = (int)(wd.agents[i] / 200);
        quad[(x >= 100) + 2 * (y >= 50)]++;
    }
    for (int q = 0; q < 4; q++)
        assert_true(quad[q] > 850 && quad[q] < 1150);
    release(&wd);
}

/* Centre placement: every agent within the centred disk that holds them at half density. */
static void test_center_placement(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = 120;
    sc.height = 90;
    sc.count = 500;
    sc.placement = SIM_PLACE_CENTER;
    world wd = make(&sc);
    assert_distinct(&sc, &wd);
    double radius = sqrt(2.0 * 500 / M_PI) + 1.0;
    for (int64_t i = 0; i < wd.n; i++) {
        double x = (double)(wd.agents[i] % 120) - 59.5, y = (double)(wd.agents[i] / 120) - 44.5;
        if (x * x + y * y > radius * radius)
            fail_msg("agent %lld at (%g, %g) from the centre", (long long)i, x, y);
    }
    release(&wd);
}

/* Same seed, same world (whatever the thread count); another seed, another world. */
static void test_seed_determinism(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = 130;
    sc.height = 70;
    sc.count = 900;
    omp_set_num_threads(1);
    world a = make(&sc);
    omp_set_num_threads(2);
    world b = make(&sc);
    assert_memory_equal(a.field, b.field, 130 * 70 * sizeof(float));
    assert_memory_equal(a.agents, b.agents, 900 * sizeof(uint32_t));
    sc.seed = 2;
    world c = make(&sc);
    assert_true(memcmp(a.field, c.field, 130 * 70 * sizeof(float)) != 0);
    assert_true(memcmp(a.agents, c.agents, 900 * sizeof(uint32_t)) != 0);
    release(&a);
    release(&b);
    release(&c);
}

static void test_check_agents_rejects(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = 10;
    sc.height = 10;
    sim_err err = {{0}};
    uint32_t ok[3] = {0, 99, 50};
    assert_int_equal(sim_world_check_agents(&sc, ok, 3, 1, &err), SIM_OK);
    assert_int_equal(sim_world_check_agents(&sc, ok, 0, 1, &err), SIM_OK);
    uint32_t outside[3] = {0, 100, 50};
    assert_int_equal(sim_world_check_agents(&sc, outside, 3, 1, &err), SIM_EINVAL);
    hz_assert_contains(err.msg, "agent 1");
    uint32_t dup[4] = {5, 6, 7, 6};
    assert_int_equal(sim_world_check_agents(&sc, dup, 4, 1, &err), SIM_EINVAL);
    hz_assert_contains(err.msg, "agent 3");
}

/* Over a million agents on several threads (the parallel check): a valid state passes; a
 * duplicate or a cell outside the grid is refused with the same first offender as the serial
 * check names. */
static void test_check_agents_parallel(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = 1100;
    sc.height = 1000;
    const int64_t n = (int64_t)sc.width * sc.height;
    uint32_t *a = malloc((size_t)n * sizeof *a);
    assert_non_null(a);
    for (int64_t i = 0; i < n; i++)
        a[i] = (uint32_t)((i * 7919) % n); /* a permutation: 7919 is prime, n is not its multiple */
    sim_err err = {{0}};
    for (int threads = 1; threads <= 3; threads += 2)
        assert_int_equal(sim_world_check_agents(&sc, a, n, threads, &err), SIM_OK);
    const uint32_t keep = a[900000];
    a[900000] = a[12];
    for (int threads = 1; threads <= 3; threads += 2) {
        assert_int_equal(sim_world_check_agents(&sc, a, n, threads, &err), SIM_EINVAL);
        hz_assert_contains(err.msg, "agent 900000:");
        hz_assert_contains(err.msg, "already holds");
    }
    a[900000] = keep;
    a[500000] = (uint32_t)n;
    for (int threads = 1; threads <= 3; threads += 2) {
        assert_int_equal(sim_world_check_agents(&sc, a, n, threads, &err), SIM_EINVAL);
        hz_assert_contains(err.msg, "agent 500000:");
        hz_assert_contains(err.msg, "outside");
    }
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_values),
        cmocka_unit_test(test_agents_count_and_distinct),
        cmocka_unit_test(test_random_spread),
        cmocka_unit_test(test_center_placement),
        cmocka_unit_test(test_seed_determinism),
        cmocka_unit_test(test_check_agents_rejects),
        cmocka_unit_test(test_check_agents_parallel),
        cmocka_unit_test(test_parallel_shuffle),
        cmocka_unit_test(test_threads_same_world),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
