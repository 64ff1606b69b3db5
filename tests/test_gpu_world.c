/* test_gpu_world.c - the CUDA backend builds the initial world on the device (create_fresh,
 * gpu_world.cu): the field and the agents' cells equal sim_world_init's on the host, bit for
 * bit, for worlds placed entirely by the serial tail, by rounds of reservations, at densities up
 * to every cell, with and without initial noise, and for a centred placement (built on the
 * host); the steps after it equal the CPU backend's. Skipped (77) without a usable GPU.
 * HZ_GPU_QUICK=1 leaves out the largest world. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpu_backend.h"
#include "sim.h"
#include "sim_world.h"

static int quick;

typedef struct world_case {
    int w, h;
    int64_t count;   /* -1: density */
    double density;
    uint64_t seed;
    float init_noise;
    int center;
} world_case;

static sim_scenario scenario_of(const world_case *c)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = c->w;
    sc.height = c->h;
    sc.count = c->count;
    sc.density = c->density;
    sc.seed = c->seed;
    sc.initial = 0.25f;
    sc.init_noise = c->init_noise;
    sc.placement = c->center ? SIM_PLACE_CENTER : SIM_PLACE_RANDOM;
    return sc;
}

/* The device's world equals the host's, and three steps later so do the checksums. */
static void check_world(const world_case *c)
{
    sim_scenario sc = scenario_of(c);
    const int64_t cells = (int64_t)c->w * c->h, n = sim_scenario_agent_count(&sc);
    float *hf = malloc((size_t)cells * sizeof *hf), *gf = malloc((size_t)cells * sizeof *gf);
    uint32_t *ha = malloc((size_t)(n ? n : 1) * sizeof *ha);
    uint32_t *ga = malloc((size_t)(n ? n : 1) * sizeof *ga);
    assert_non_null(hf);
    assert_non_null(gf);
    assert_non_null(ha);
    assert_non_null(ga);
    sim_err err = {{0}};
    assert_int_equal(sim_world_init(&sc, 2, hf, ha, &err), SIM_OK);

    sim *g = NULL, *cpu = NULL;
    if (sim_create(&sc, gpu_cuda_backend(), 0, &g, &err) != SIM_OK)
        fail_msg("%dx%d: cuda create: %s", c->w, c->h, err.msg);
    assert_int_equal(sim_agent_count(g), n);
    assert_int_equal(sim_read_field(g, gf), SIM_OK);
    assert_int_equal(sim_read_agents(g, ga), SIM_OK);
    if (memcmp(hf, gf, (size_t)cells * sizeof *hf) != 0)
        fail_msg("%dx%d seed %llu: the device's initial field differs", c->w, c->h,
                 (unsigned long long)c->seed);
    for (int64_t i = 0; i < n; i++)
        if (ha[i] != ga[i])
            fail_msg("%dx%d seed %llu, %lld agents: agent %lld at cell %u on the device, %u on "
                     "the host", c->w, c->h, (unsigned long long)c->seed, (long long)n,
                     (long long)i, ga[i], ha[i]);

    if (sim_create(&sc, sim_cpu_backend(), 2, &cpu, &err) != SIM_OK)
        fail_msg("cpu create: %s", err.msg);
    for (int k = 0; k < 3; k++) {
        sim_stats a, b;
        assert_int_equal(sim_step(cpu, 1, &a), SIM_OK);
        assert_int_equal(sim_step(g, 1, &b), SIM_OK);
        if (a.checksum != b.checksum)
            fail_msg("%dx%d: step %d: checksum %016llx on the cpu, %016llx on cuda", c->w, c->h,
                     k, (unsigned long long)a.checksum, (unsigned long long)b.checksum);
    }
    printf("world %dx%d, %lld agents, seed %llu%s: equal\n", c->w, c->h, (long long)n,
           (unsigned long long)c->seed, c->center ? " (centred)" : "");
    sim_destroy(g);
    sim_destroy(cpu);
    free(hf);
    free(gf);
    free(ha);
    free(ga);
}

/* At most 65,536 cells: every step in the serial tail, on one device thread. */
static void test_serial_tail(void **state)
{
    (void)state;
    const world_case cases[] = {
        {64, 64, 409, 0.0, 1, 0.0f, 0},
        {200, 150, -1, 0.5, 7, 1.0f, 0},
        {17, 3, -1, 1.0, 3, 0.0f, 0},
        {50, 40, 0, 0.0, 3, 1.0f, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_world(&cases[i]);
}

/* Larger worlds: rounds of reservations, then the tail; sparse, dense and full. */
static void test_rounds(void **state)
{
    (void)state;
    const world_case cases[] = {
        {512, 512, -1, 0.1, 1, 1.0f, 0},
        {1000, 703, -1, 0.93, 99, 0.5f, 0},
        {300, 301, -1, 1.0, 5, 0.0f, 0},
        {777, 333, 100, 0.0, 8, 0.0f, 0},
        {2048, 2048, 1000000, 0.0, 42, 2.0f, 0},
    };
    const size_t n = sizeof cases / sizeof cases[0] - (quick ? 1 : 0);
    for (size_t i = 0; i < n; i++)
        check_world(&cases[i]);
}

/* A centred placement: the candidates are a disk's cells (built on the host). */
static void test_centred(void **state)
{
    (void)state;
    const world_case c = {400, 300, 5000, 0.0, 2, 1.0f, 1};
    check_world(&c);
}

int main(void)
{
    char why[256];
    if (gpu_probe(why, sizeof why) <= 0) {
        printf("test_gpu_world: skipped: %s\n", why);
        return 77;
    }
    quick = getenv("HZ_GPU_QUICK") != NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serial_tail),
        cmocka_unit_test(test_rounds),
        cmocka_unit_test(test_centred),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
