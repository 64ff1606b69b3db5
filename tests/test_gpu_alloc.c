/* test_gpu_alloc.c - the CUDA backend's allocation door (gpu/gpu_alloc.h) under failure. For
 * every N, a sim_create on the CUDA backend whose Nth device (or pinned host) allocation fails
 * returns SIM_EDEVMEM (SIM_ENOMEM for pinned host memory) with a message, never a crash, and
 * leaves nothing behind: the door's live count and sim_alloc's are back at their baseline, and on
 * a world of some megabytes the device's free memory is too (which also catches memory taken
 * around the door). The same for the host allocations of that create (sim_alloc), and for the
 * scratch of a horizon query and the frame buffer of compose on an instance that lives on and
 * still gives the CPU's results afterwards. Skipped (77) without a usable GPU. HZ_GPU_QUICK=1
 * leaves out the large world (for compute-sanitizer, whose own allocations blur free memory).
 * Free device memory is a figure for the whole device, which other processes (ctest -j, a
 * sanitizer beside it) move by hundreds of MiB when they start a context, so it is only printed
 * unless HZ_GPU_MEMCHECK=1 says this test has the device to itself; then it must come back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "gpu_backend.h"
#include "hz_test_util.h"
#include "render_colormap.h"
#include "render_frame.h"
#include "sim.h"
#include "sim_alloc.h"

/* Free device memory may differ by this much after a sweep without a leak (the driver's own
 * bookkeeping); a leak in the large sweep is hundreds of MiB. */
#define MEM_SLACK ((size_t)8 << 20)

static int quick, memcheck;

static void set(sim_scenario *sc, const char *kv)
{
    sim_err err = {{0}};
    if (sim_scenario_set(sc, kv, &err) != SIM_OK)
        fail_msg("--set %s: %s", kv, err.msg);
}

/* The small world of the sweeps: odd sides, agents in several tiles. */
static void small_scenario(sim_scenario *sc)
{
    sim_scenario_defaults(sc);
    set(sc, "world.width=37");
    set(sc, "world.height=29");
    set(sc, "agents.density=0.2");
    set(sc, "agents.radius=3");
    set(sc, "field.sweeps=3");
    set(sc, "run.seed=11");
}

/* About 1M cells: every field buffer is 4 MiB, so a leaked one shows in cudaMemGetInfo. */
static void large_scenario(sim_scenario *sc)
{
    small_scenario(sc);
    set(sc, "world.width=1031");
    set(sc, "world.height=1017");
}

static size_t device_free(void)
{
    size_t free_b = 0, total_b = 0;
    assert_int_equal(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
    return free_b;
}

/* Device and pinned allocations of one sim_create of sc (which must succeed). */
static long count_create(const sim_scenario *sc)
{
    sim *g = NULL;
    sim_err err = {{0}};
    long live = gpu_alloc_live();
    gpu_alloc_fail_at(0);
    if (sim_create(sc, gpu_cuda_backend(), 0, &g, &err) != SIM_OK)
        fail_msg("cuda create: %s", err.msg);
    long n = gpu_alloc_attempts();
    assert_int_equal(gpu_alloc_live(), live + n); /* every attempt succeeded and is held */
    sim_destroy(g);
    assert_int_equal(gpu_alloc_live(), live);
    return n;
}

/* Fails each of sim_create's device allocations once, in turn; returns how many were pinned. */
static long sweep_create(const sim_scenario *sc, const char *label)
{
    long total = count_create(sc), pinned = 0;
    long live = gpu_alloc_live(), host_live = sim_alloc_live();
    for (long n = 1; n <= total + 1; n++) {
        sim *g = NULL;
        sim_err err = {{0}};
        gpu_alloc_fail_at(n);
        int rc = sim_create(sc, gpu_cuda_backend(), 0, &g, &err);
        long attempts = gpu_alloc_attempts();
        gpu_alloc_fail_at(0);
        if (n > attempts) { /* past the last allocation: the create is whole */
            assert_int_equal(rc, SIM_OK);
            assert_int_equal(n, total + 1);
            sim_destroy(g);
            break;
        }
        if (rc != SIM_EDEVMEM && rc != SIM_ENOMEM)
            fail_msg("%s: device allocation %ld of %ld failed but create returned %d (%s)", label,
                     n, total, rc, err.msg);
        assert_null(g);
        hz_assert_contains(err.msg, rc == SIM_EDEVMEM ? "out of device memory"
                                                      : "out of pinned host memory");
        hz_assert_contains(err.msg, "injected");
        pinned += rc == SIM_ENOMEM;
        if (gpu_alloc_live() != live || sim_alloc_live() != host_live)
            fail_msg("%s: allocation %ld: %ld device and %ld host blocks left over", label, n,
                     gpu_alloc_live() - live, sim_alloc_live() - host_live);
    }
    print_message("%s: %ld device allocations in sim_create (%ld pinned host); each failed "
                  "once, cleanly\n", label, total, pinned);
    return pinned;
}

static void test_count_and_release(void **state)
{
    (void)state;
    sim_scenario sc;
    small_scenario(&sc);
    long n = count_create(&sc);
    /* fields, claims, column sums, control, 3 agent arrays, occupancy, 2 x 3 bins, counts,
     * ranks, the SELL mapping's tile order, 2 pinned readback buffers */
    assert_true(n >= 15);
    /* the switch counts from its own call and is off again at 0 */
    gpu_alloc_fail_at(0);
    assert_int_equal(gpu_alloc_attempts(), 0);
}

static void test_every_device_failure_small(void **state)
{
    (void)state;
    sim_scenario sc;
    small_scenario(&sc);
    assert_true(sweep_create(&sc, "37x29") >= 1); /* the pinned buffers were reached too */
}

/* The same sweep on a world where a leaked buffer would show in the device's free memory. */
static void test_every_device_failure_memory(void **state)
{
    (void)state;
    if (quick)
        skip();
    sim_scenario sc;
    large_scenario(&sc);
    count_create(&sc); /* warm-up: modules and the driver's pools are loaded by now */
    size_t before = device_free();
    sweep_create(&sc, "1031x1017");
    size_t after = device_free();
    print_message("device memory free: %.1f MiB before, %.1f MiB after the sweep\n",
                  before / 1048576.0, after / 1048576.0);
    if (memcheck && after + MEM_SLACK < before)
        fail_msg("device memory leaked: %zu bytes less free after the sweep", before - after);
}

/* The host side of the same create: the sim, the initial world and the backend's state. */
static void test_every_host_failure(void **state)
{
    (void)state;
    sim_scenario sc;
    small_scenario(&sc);
    long live = gpu_alloc_live(), host_live = sim_alloc_live();
    long total = 0;
    for (long n = 1;; n++) {
        sim *g = NULL;
        sim_err err = {{0}};
        sim_alloc_fail_at(n);
        int rc = sim_create(&sc, gpu_cuda_backend(), 0, &g, &err);
        long attempts = sim_alloc_attempts();
        sim_alloc_fail_at(0);
        if (n > attempts) {
            assert_int_equal(rc, SIM_OK);
            sim_destroy(g);
            total = n - 1;
            break;
        }
        if (rc != SIM_ENOMEM)
            fail_msg("host allocation %ld failed but create returned %d (%s)", n, rc, err.msg);
        assert_null(g);
        hz_assert_contains(err.msg, "out of");
        assert_int_equal(gpu_alloc_live(), live);
        assert_int_equal(sim_alloc_live(), host_live);
    }
    assert_true(total >= 4); /* field, agents, the sim, the backend's state */
    print_message("%ld host allocations in sim_create on cuda; each failed once, cleanly\n",
                  total);
}

/* Horizon sums and compose allocate on demand. A failure there leaves the instance as it was:
 * it answers the next call, and its sums and pixels are still the CPU's. */
static void test_scratch_failures_leave_a_working_instance(void **state)
{
    (void)state;
    sim_scenario sc;
    small_scenario(&sc);
    sim *g = NULL, *c = NULL;
    sim_err err = {{0}};
    const long base = gpu_alloc_live();
    if (sim_create(&sc, gpu_cuda_backend(), 0, &g, &err) != SIM_OK)
        fail_msg("cuda create: %s", err.msg);
    if (sim_create(&sc, sim_cpu_backend(), 1, &c, &err) != SIM_OK)
        fail_msg("cpu create: %s", err.msg);
    const long live = gpu_alloc_live();

    enum { NQ = 50 };
    uint32_t q[NQ];
    for (int i = 0; i < NQ; i++)
        q[i] = (uint32_t)((i * 389) % (37 * 29));
    int64_t want[NQ * 9], got[NQ * 9];
    assert_int_equal(sim_horizon(c, q, NQ, want), SIM_OK);
    gpu_alloc_fail_at(0);
    assert_int_equal(sim_horizon(g, q, NQ, got), SIM_OK);
    const long per_query = gpu_alloc_attempts();
    assert_true(per_query >= 3); /* queries, sums, bins */
    assert_int_equal(gpu_alloc_live(), live);
    for (long n = 1; n <= per_query; n++) {
        gpu_alloc_fail_at(n);
        int rc = sim_horizon(g, q, NQ, got);
        gpu_alloc_fail_at(0);
        if (rc != SIM_EDEVMEM)
            fail_msg("horizon: allocation %ld of %ld failed but it returned %d (%s)", n,
                     per_query, rc, sim_errmsg(g));
        hz_assert_contains(sim_errmsg(g), "out of device memory");
        assert_int_equal(gpu_alloc_live(), live);
    }
    memset(got, 0, sizeof got);
    assert_int_equal(sim_horizon(g, q, NQ, got), SIM_OK);
    assert_memory_equal(want, got, sizeof want);

    /* compose: the frame buffer is the one allocation, made on the first call */
    sim_view v;
    render_view_init(&v, SIM_CMAP_VIRIDIS, 0.0f);
    render_view_fit(&v, sc.width, sc.height, 61, 47);
    const size_t bytes = (size_t)v.w * v.h * 4;
    const int64_t cells = (int64_t)sc.width * sc.height, na = sim_agent_count(g);
    uint8_t *px = malloc(bytes), *ref = malloc(bytes), *occ = malloc((size_t)cells);
    float *field = malloc((size_t)cells * sizeof *field);
    uint32_t *agents = malloc((size_t)(na > 0 ? na : 1) * sizeof *agents);
    assert_true(px && ref && occ && field && agents);
    gpu_alloc_fail_at(1);
    int rc = sim_compose(g, &v, px);
    gpu_alloc_fail_at(0);
    assert_int_equal(rc, SIM_EDEVMEM);
    hz_assert_contains(sim_errmsg(g), "out of device memory");
    assert_int_equal(gpu_alloc_live(), live);
    if (sim_compose(g, &v, px) != SIM_OK)
        fail_msg("compose after a failed one: %s", sim_errmsg(g));
    assert_int_equal(gpu_alloc_live(), live + 1); /* the frame buffer, kept for the next frame */
    assert_int_equal(sim_read_field(g, field), SIM_OK);
    assert_int_equal(sim_read_agents(g, agents), SIM_OK);
    render_frame_occupancy(agents, na, occ, cells);
    render_frame_compose(&v, field, sc.width, sc.height, occ, render_field_max(field, cells), ref);
    assert_memory_equal(ref, px, bytes);

    /* and the instance steps on, in step with the CPU */
    for (int k = 0; k < 5; k++) {
        sim_stats a, b;
        assert_int_equal(sim_step(c, 1, &a), SIM_OK);
        if (sim_step(g, 1, &b) != SIM_OK)
            fail_msg("cuda step %d: %s", k, sim_errmsg(g));
        assert_int_equal(a.moved, b.moved);
        assert_int_equal(a.checksum, b.checksum);
    }
    free(px);
    free(ref);
    free(occ);
    free(field);
    free(agents);
    sim_destroy(g);
    sim_destroy(c);
    assert_int_equal(gpu_alloc_live(), base);
}

int main(void)
{
    char why[256];
    if (gpu_probe(why, sizeof why) <= 0) {
        printf("test_gpu_alloc: skipped: %s\n", why);
        return 77;
    }
    if (getenv("HORIZON_GPU_FAIL_ALLOC")) {
        printf("test_gpu_alloc: HORIZON_GPU_FAIL_ALLOC is set; unset it to run this test\n");
        return 1;
    }
    quick = getenv("HZ_GPU_QUICK") != NULL;
    memcheck = getenv("HZ_GPU_MEMCHECK") != NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_and_release),
        cmocka_unit_test(test_every_device_failure_small),
        cmocka_unit_test(test_every_host_failure),
        cmocka_unit_test(test_scratch_failures_leave_a_working_instance),
        cmocka_unit_test(test_every_device_failure_memory),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    /* Every block of the process is back: nothing for compute-sanitizer's leak check to find.
     * The reset destroys the context, which is when that check looks. */
    if (gpu_alloc_live() != 0) {
        printf("test_gpu_alloc: %ld device blocks still allocated at exit\n", gpu_alloc_live());
        rc = 1;
    }
    if (cudaDeviceReset() != cudaSuccess)
        rc = 1;
    return rc;
}
