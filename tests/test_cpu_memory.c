/* test_cpu_memory.c - the CPU backend's memory (sim_cpu.c): what its create asks the allocator
 * for, against README's bounds (12 B/cell of shared state + 8 B/cell for the one field, beside
 * the terms that grow with the rows and the threads; 12 B per agent on any number of threads),
 * and the split that `horizon info` prints (sim_cpu_memory) against the same measurement. The
 * bound on the measured bytes is worked out here from the scenario, not taken from
 * sim_cpu_memory, so that a backend that takes more per cell fails even when its estimate
 * says the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim.h"
#include "sim_alloc.h"
#include "sim_backend.h"

/* The backend's struct: a copy of the scenario, a disk table, pointers and counters. */
#define STRUCT_BYTES (sizeof(sim_scenario) + 4096)

/* Bytes the CPU backend's create asks for on `threads` threads, for a world of sc's agents on
 * its first cells (where they stand does not change the memory). */
static size_t requested_by_create(const sim_scenario *sc, int threads)
{
    const size_t cells = (size_t)sc->width * (size_t)sc->height;
    const int64_t n = sim_scenario_agent_count(sc);
    float *field = calloc(cells, sizeof *field);
    uint32_t *agents = malloc((size_t)(n > 0 ? n : 1) * sizeof *agents);
    assert_non_null(field);
    assert_non_null(agents);
    for (int64_t i = 0; i < n; i++)
        agents[i] = (uint32_t)i;
    const sim_backend_ops *ops = sim_cpu_backend();
    void *impl = NULL;
    sim_err err = {{0}};
    sim_alloc_fail_at(0); /* resets the counters */
    if (ops->create(sc, field, agents, n, threads, &impl, &err) != SIM_OK)
        fail_msg("create: %s", err.msg);
    size_t got = sim_alloc_requested();
    ops->destroy(impl);
    free(agents);
    free(field);
    return got;
}

/* What may grow with neither the cells nor the agents, in bytes, for `bands` threads: per row,
 * 2r + 3 more entries in each of the two field buffers (the prefix rows' halos live there), its
 * row offset, maximum and claims' start; once, the zero row in each buffer and the offsets of
 * the 2r + 2 rows around the grid, the column sums; per thread 3 dense rows of int64 (columns
 * -1 .. w), 3 deposited rows of floats, a start and its band's counts, and with several threads
 * a row of its band's column sums (doubles, the width to whole cache lines), and then one more
 * (a step's column sums finished by the next step). */
static size_t rows_and_threads(int w, int h, int r, int bands)
{
    size_t b = (size_t)h * (2 * (2 * (size_t)r + 3) * 4 + 8 + 4 + 4);
    b += 2 * ((size_t)w + 2 * (size_t)r + 3) * 4 + (2 * (size_t)r + 2) * 8 + (size_t)w * 8;
    b += (size_t)bands * (3 * ((size_t)w + 2) * 8 + 3 * (size_t)w * 4 + 4 + 5 * 8);
    if (bands > 1)
        b += ((size_t)bands + 1) * (((size_t)w + 7) & ~(size_t)7) * 8;
    return b;
}

static void check(int w, int h, int r, int boundary, int64_t count)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = w;
    sc.height = h;
    sc.radius = r;
    sc.boundary = boundary;
    sc.count = count;
    const size_t cells = (size_t)w * (size_t)h;
    const int64_t n = sim_scenario_agent_count(&sc);
    for (int threads = 1; threads <= 16; threads *= 4) {
        size_t got = requested_by_create(&sc, threads);
        /* README's bounds: 12 B/cell shared (claims 8, occupancy 4) + 8 B/cell for the field;
         * per agent its cell (4 B) and room for one claim (8 B), whatever the threads. */
        size_t bound = 20 * cells + (size_t)(n > 0 ? n : 1) * (4 + 8) +
                       rows_and_threads(w, h, r, threads) + STRUCT_BYTES;
        if (got > bound)
            fail_msg("%dx%d r=%d, %d threads: create asked for %zu bytes, %.2f B/cell; at most "
                     "%zu (20 B/cell and the terms of rows, threads and agents)", w, h, r,
                     threads, got, (double)got / (double)cells, bound);
        /* The split `horizon info` prints is what create takes, and within the bounds. */
        sim_mem m;
        sim_cpu_memory(&sc, threads, &m);
        if (got < m.total || got - m.total > STRUCT_BYTES)
            fail_msg("%dx%d r=%d, %d threads: estimate %zu bytes, create asked for %zu", w, h, r,
                     threads, m.total, got);
        assert_true(m.shared_per_cell <= SIM_MEM_SHARED_MAX);
        assert_true(m.field_per_cell <= SIM_MEM_FIELD_MAX);
        assert_int_equal(m.n_fields, 1);
        assert_true(m.maps_per_cell == 0.0);
        assert_true(n == 0 || m.per_agent <= 12.0);
        assert_true(sim_mem_within(&m));
        char line[256];
        sim_mem_describe(&m, line, sizeof line);
        assert_non_null(strstr(line, "within"));
    }
    sim_mem m;
    sim_cpu_memory(&sc, 0, &m);
    assert_true(sim_cpu_estimate_bytes(&sc) == m.total);
}

/* Square and wide worlds at the radii the step is measured at, a large radius on a narrow
 * world (where the rows' halos weigh most), dense and sparse agents, none at all. */
static void test_within_bounds(void **state)
{
    (void)state;
    check(512, 512, 8, SIM_BOUNDARY_PERIODIC, -1);
    check(512, 512, 32, SIM_BOUNDARY_WALL, -1);
    check(1024, 96, 32, SIM_BOUNDARY_FIXED, 100);
    check(300, 200, 64, SIM_BOUNDARY_PERIODIC, -1);
    check(97, 61, 0, SIM_BOUNDARY_WALL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_within_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
