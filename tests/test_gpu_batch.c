/* test_gpu_batch.c - sim_step_batch on the CUDA backend (gpu/gpu_step_batch.cu) against sim_step:
 * for worlds whose sides are not multiples of a tile (37x23, 300x200, 513x511), with and without
 * agents, periodic and wall, batches of 1, 2, 7, 64 and 256 steps with statistics never, always,
 * on alternate steps, on the first or last step only and at random, every out[k] equals field by
 * field (the checksum included) what sim_step gives on the CPU backend and on the CUDA backend,
 * and the CPU backend's own batches; the final fields and agents are equal byte for byte; with
 * the automatic choice (the one-block kernel in tiny worlds), one step a graph and runs of 3 and
 * 8 steps captured in one graph, and the resident kernels (the cooperative grid, the one-block
 * kernel of tiny worlds) forced on in other shapes; deferred statistics and the column sums
 * from the step's pass (HORIZON_ST_DEFER=1 and 0). Also:
 * when the column-sum ring cannot be had in full (an injected allocation failure) the batch runs
 * in smaller chunks, or its steps with statistics one by one, with the same results; and the
 * SIM_EINVAL cases. Skipped (77) without a usable GPU. HZ_GPU_QUICK=1 runs the two smaller
 * worlds and batches of at most 64 steps (for compute-sanitizer); HZ_TEST_FILTER=NAME only the
 * cases whose name matches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpu_backend.h"
#include "hz_test_util.h"
#include "sim.h"

static int quick;

static int same_float(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

static int same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

static void expect_same(const sim_stats *want, const sim_stats *got, const char *what, int k)
{
    if (want->step != got->step || want->agents != got->agents || want->moved != got->moved ||
        want->checksum != got->checksum || !same_double(want->field_total, got->field_total) ||
        !same_double(want->field_mean, got->field_mean) ||
        !same_float(want->field_max, got->field_max) ||
        !same_float(want->residual, got->residual))
        fail_msg("%s, batch index %d: step %lld/%lld agents %lld/%lld moved %lld/%lld checksum "
                 "%016llx/%016llx total %.17g/%.17g mean %.17g/%.17g max %.9g/%.9g residual "
                 "%.9g/%.9g",
                 what, k, (long long)want->step, (long long)got->step, (long long)want->agents,
                 (long long)got->agents, (long long)want->moved, (long long)got->moved,
                 (unsigned long long)want->checksum, (unsigned long long)got->checksum,
                 want->field_total, got->field_total, want->field_mean, got->field_mean,
                 (double)want->field_max, (double)got->field_max, (double)want->residual,
                 (double)got->residual);
}

static void set(sim_scenario *sc, const char *kv)
{
    sim_err err = {{0}};
    if (sim_scenario_set(sc, kv, &err) != SIM_OK)
        fail_msg("--set %s: %s", kv, err.msg);
}

static void setf(sim_scenario *sc, const char *fmt, ...)
{
    char buf[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    set(sc, buf);
}

static void scenario(sim_scenario *sc, int w, int h, int agents, int periodic, uint64_t seed)
{
    sim_scenario_defaults(sc);
    setf(sc, "world.width=%d", w);
    setf(sc, "world.height=%d", h);
    set(sc, periodic ? "world.boundary=periodic" : "world.boundary=wall");
    set(sc, "agents.count=-1");
    set(sc, agents ? "agents.density=0.1" : "agents.density=0");
    set(sc, "agents.radius=5");
    set(sc, "agents.noise=0.1");
    set(sc, "field.sweeps=3"); /* an odd number of passes: the buffers swap between steps */
    set(sc, "field.decay=0.01");
    set(sc, "field.init_noise=1");
    setf(sc, "run.seed=%llu", (unsigned long long)seed);
}

static sim *create(const sim_scenario *sc, const sim_backend_ops *ops, const char *label)
{
    sim *s = NULL;
    sim_err err = {{0}};
    if (sim_create(sc, ops, 2, &s, &err) != SIM_OK)
        fail_msg("%s: %s create: %s", label, ops->name, err.msg);
    return s;
}

/* Statistics pattern p for a batch of n. */
static void pattern(int p, int n, hz_rng *rng, uint8_t *want)
{
    for (int k = 0; k < n; k++)
        want[k] = p == 0   ? 0
                  : p == 1 ? 1
                  : p == 2 ? (uint8_t)(k % 2 == 1)
                  : p == 3 ? (uint8_t)(k == 0)
                  : p == 4 ? (uint8_t)(k == n - 1)
                           : (uint8_t)(hz_below(rng, 4) == 0);
}
enum { PATTERNS = 6 };

static void expect_same_state(sim *a, sim *b, const char *label)
{
    const sim_scenario *sc = sim_get_scenario(a);
    size_t cells = (size_t)sc->width * sc->height;
    int64_t n = sim_agent_count(a);
    float *fa = malloc(cells * sizeof *fa), *fb = malloc(cells * sizeof *fb);
    uint32_t *pa = malloc((size_t)(n + 1) * sizeof *pa), *pb = malloc((size_t)(n + 1) * sizeof *pb);
    assert_true(fa && fb && pa && pb);
    assert_int_equal(sim_read_field(a, fa), SIM_OK);
    assert_int_equal(sim_read_field(b, fb), SIM_OK);
    assert_int_equal(sim_read_agents(a, pa), SIM_OK);
    assert_int_equal(sim_read_agents(b, pb), SIM_OK);
    if (memcmp(fa, fb, cells * sizeof *fa) != 0)
        fail_msg("%s: final fields differ", label);
    if (n > 0 && memcmp(pa, pb, (size_t)n * sizeof *pa) != 0)
        fail_msg("%s: final agent cells differ", label);
    free(fa);
    free(fb);
    free(pa);
    free(pb);
}

/* One world: the CPU stepping one by one is the reference; the CUDA backend stepping one by one,
 * the CUDA backend in batches and the CPU backend in batches must all give its statistics. */
static void check_world(int w, int h, int agents, int periodic, uint64_t seed,
                        int steps_per_graph, int resident)
{
    static const int lengths[] = {1, 2, 7, 64, 256};
    const int n_lengths = quick ? 4 : 5;
    char label[96];
    snprintf(label, sizeof label, "%dx%d %s %s, %d steps a graph, resident %d", w, h,
             agents ? "agents 0.1" : "no agents", periodic ? "periodic" : "wall",
             steps_per_graph, resident);
    sim_scenario sc;
    scenario(&sc, w, h, agents, periodic, seed);
    sim *cpu = create(&sc, sim_cpu_backend(), label);
    sim *cpu_batch = create(&sc, sim_cpu_backend(), label);
    sim *gpu = create(&sc, gpu_cuda_backend(), label);
    sim *gpu_batch = create(&sc, gpu_cuda_backend(), label);
    gpu_tuning t = {0, 0, 0, steps_per_graph, resident};
    sim_err err = {{0}};
    if (gpu_tune(gpu_batch, &t, &err) != SIM_OK)
        fail_msg("%s: gpu_tune: %s", label, err.msg);
    static uint8_t want[SIM_STEP_BATCH_MAX];
    static sim_stats got_g[SIM_STEP_BATCH_MAX], got_c[SIM_STEP_BATCH_MAX];
    hz_rng rng = {seed | 1};
    for (int li = 0; li < n_lengths; li++) {
        const int n = lengths[li];
        /* The long batches with three patterns (none, mixed, and every step or every other),
         * the short ones with all. */
        for (int p = 0; p < PATTERNS; p++) {
            if (n >= 64 && p != 0 && p != 5 && p != (n == 64 ? 1 : 2))
                continue;
            pattern(p, n, &rng, want);
            char what[160];
            snprintf(what, sizeof what, "%s: batch of %d from step %lld, pattern %d", label, n,
                     (long long)sim_steps_done(gpu_batch), p);
            if (sim_step_batch(gpu_batch, n, want, got_g) != SIM_OK)
                fail_msg("%s: cuda batch: %s", what, sim_errmsg(gpu_batch));
            if (sim_step_batch(cpu_batch, n, want, got_c) != SIM_OK)
                fail_msg("%s: cpu batch: %s", what, sim_errmsg(cpu_batch));
            for (int k = 0; k < n; k++) {
                sim_stats ref, one;
                if (sim_step(cpu, want[k], &ref) != SIM_OK)
                    fail_msg("%s: cpu step: %s", what, sim_errmsg(cpu));
                if (sim_step(gpu, want[k], &one) != SIM_OK)
                    fail_msg("%s: cuda step: %s", what, sim_errmsg(gpu));
                expect_same(&ref, &one, what, k); /* the per-step path, as before */
                expect_same(&ref, &got_g[k], what, k);
                expect_same(&ref, &got_c[k], what, k);
            }
        }
    }
    assert_int_equal(sim_steps_done(gpu_batch), sim_steps_done(cpu));
    expect_same_state(cpu, gpu_batch, label);
    expect_same_state(cpu, cpu_batch, label);
    sim_destroy(cpu);
    sim_destroy(cpu_batch);
    sim_destroy(gpu);
    sim_destroy(gpu_batch);
}

/* How a batch's steps without statistics run: automatically (the resident kernel in the
 * 37x23 world, one graph a step in the larger ones), and graphs (the resident kernel off) of
 * one step, of runs of an odd number (a run then starts on either field buffer and either set
 * of bins) and of 8 steps. */
static const int graph_steps[4] = {0, 1, 3, 8};
static const int graph_resident[4] = {GPU_RES_AUTO, GPU_RES_OFF, GPU_RES_OFF, GPU_RES_OFF};

static void test_small_world(void **state)
{
    (void)state;
    for (int g = 0; g < 4; g++)
        for (int a = 0; a < 2; a++)
            for (int p = 0; p < 2; p++)
                check_world(37, 23, a, p, 101 + 2 * a + p, graph_steps[g], graph_resident[g]);
}

static void test_medium_world(void **state)
{
    (void)state;
    for (int g = 0; g < 4; g++)
        for (int a = 0; a < 2; a++)
            for (int p = 0; p < 2; p++)
                check_world(300, 200, a, p, 201 + 2 * a + p, graph_steps[g], graph_resident[g]);
}

static void test_large_world(void **state)
{
    (void)state;
    if (quick)
        skip();
    for (int g = 0; g < 2; g++)
        for (int a = 0; a < 2; a++)
            for (int p = 0; p < 2; p++)
                check_world(513, 511, a, p, 301 + 2 * a + p, 0, graph_resident[g]);
}

/* Deferred statistics (small worlds, gpu_stats_defer) against the column sums from the step's
 * pass (HORIZON_ST_DEFER=0): graphs of one step and runs of 3 and 8, batches whose steps with
 * statistics outnumber the snapshot slots (256 steps, every other one), worlds whose cell count
 * is and is not a multiple of 4 (the snapshot slots are rounded up): every out[k] equals the
 * CPU's. */
static void test_defer(void **state)
{
    (void)state;
    for (int forced = 0; forced < 2; forced++) {
        assert_int_equal(setenv("HORIZON_ST_DEFER", forced ? "0" : "1", 1), 0);
        for (int g = 1; g < 4; g++) {
            check_world(300, 200, 1, 1, 401 + 2 * g + forced, graph_steps[g], GPU_RES_OFF);
            check_world(37, 23, 1, 0, 421 + 2 * g + forced, graph_steps[g], GPU_RES_OFF);
        }
    }
    assert_int_equal(unsetenv("HORIZON_ST_DEFER"), 0);
}

/* A resident kernel (`resident`: GPU_RES_ON, the cooperative grid, or GPU_RES_TINY, the
 * one-block kernel where the world fits it, else the grid) in the shapes the worlds above do not
 * reach: a bounded grid with fixed edges, radii whose disks sum in 64 bits (r > 9) and 32 bits,
 * the dense and the sparse horizon mode, no sweep (the decay in place), one, two and four
 * sweeps, no decay, worlds narrower than a tile or than the disk (the region wraps several
 * times) and a 1-wide one, a width that is not a multiple of 4, a dense world, and worlds of 44
 * tiles and too large for one block. Batches of 1, 5 and 64 steps without statistics, then one
 * with statistics on alternate steps (the grid's runs between graph steps; the one-block kernel
 * runs them all): every out[k] and the final state equal the CPU backend's steps. With GPU_RES_TINY, the shapes marked `tiny` must
 * run in the one-block kernel and the others must not. */
static void check_resident_shapes(int resident)
{
    static const struct {
        int w, h, r, sweeps, mode;
        const char *boundary;
        float decay, density;
        int tiny;
    } shapes[] = {
        {90, 70, 12, 1, GPU_HMODE_AUTO, "fixed", 0.02f, 0.1f, 1},
        {64, 64, 3, 0, GPU_HMODE_DENSE, "periodic", 0.05f, 0.3f, 1},
        {130, 66, 16, 2, GPU_HMODE_DENSE, "wall", 0.0f, 0.2f, 0},
        {20, 9, 8, 4, GPU_HMODE_SPARSE, "periodic", 0.01f, 0.25f, 1},
        {1, 40, 2, 2, GPU_HMODE_AUTO, "periodic", 0.01f, 0.2f, 1},
        {61, 67, 30, 2, GPU_HMODE_AUTO, "wall", 0.01f, 0.1f, 1},
        {96, 80, 8, 2, GPU_HMODE_AUTO, "periodic", 0.02f, 0.3f, 1},
        {701, 203, 4, 2, GPU_HMODE_SPARSE, "fixed", 0.0f, 0.05f, 0},
    };
    static uint8_t want[SIM_STEP_BATCH_MAX];
    static sim_stats got[SIM_STEP_BATCH_MAX];
    static const int lengths[] = {1, 5, 64, 9};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char label[128];
        snprintf(label, sizeof label, "resident %d %dx%d r=%d sweeps %d mode %d %s", resident,
                 shapes[i].w, shapes[i].h, shapes[i].r, shapes[i].sweeps, shapes[i].mode,
                 shapes[i].boundary);
        sim_scenario sc;
        scenario(&sc, shapes[i].w, shapes[i].h, 1, 1, 700 + i);
        setf(&sc, "world.boundary=%s", shapes[i].boundary);
        setf(&sc, "agents.density=%g", (double)shapes[i].density);
        setf(&sc, "agents.radius=%d", shapes[i].r);
        setf(&sc, "field.sweeps=%d", shapes[i].sweeps);
        setf(&sc, "field.decay=%g", (double)shapes[i].decay);
        if (strcmp(shapes[i].boundary, "fixed") == 0) {
            set(&sc, "world.fixed_top=1.5");
            set(&sc, "world.fixed_left=-0.5");
        }
        sim *cpu = create(&sc, sim_cpu_backend(), label);
        sim *gpu = create(&sc, gpu_cuda_backend(), label);
        gpu_tuning t = {shapes[i].mode, 0, 0, 0, resident};
        sim_err err = {{0}};
        if (gpu_tune(gpu, &t, &err) != SIM_OK)
            fail_msg("%s: gpu_tune: %s", label, err.msg);
        if (gpu_tiny_kernel(gpu) != (resident == GPU_RES_TINY && shapes[i].tiny))
            fail_msg("%s: one-block kernel %d, expected %d", label, gpu_tiny_kernel(gpu),
                     resident == GPU_RES_TINY && shapes[i].tiny);
        for (int li = 0; li < 4; li++) {
            const int n = lengths[li];
            for (int k = 0; k < n; k++)
                want[k] = li == 3 ? (uint8_t)(k % 2) : 0;
            if (sim_step_batch(gpu, n, want, got) != SIM_OK)
                fail_msg("%s: cuda batch: %s", label, sim_errmsg(gpu));
            for (int k = 0; k < n; k++) {
                sim_stats ref;
                if (sim_step(cpu, want[k], &ref) != SIM_OK)
                    fail_msg("%s: cpu step: %s", label, sim_errmsg(cpu));
                expect_same(&ref, &got[k], label, k);
            }
        }
        expect_same_state(cpu, gpu, label);
        sim_destroy(cpu);
        sim_destroy(gpu);
    }
}

static void test_resident_shapes(void **state)
{
    (void)state;
    check_resident_shapes(GPU_RES_ON);
}

static void test_tiny_shapes(void **state)
{
    (void)state;
    check_resident_shapes(GPU_RES_TINY);
}

/* The column-sum ring taken smaller than asked (its first allocation fails: half of it is
 * taken, and the batch runs in two chunks), and not at all (a single step with statistics whose
 * one-slot ring fails: it goes through the per-step path). The same results either way. */
static void test_ring_fallbacks(void **state)
{
    (void)state;
    sim_scenario sc;
    scenario(&sc, 67, 45, 1, 1, 404);
    static uint8_t want[SIM_STEP_BATCH_MAX];
    static sim_stats got[SIM_STEP_BATCH_MAX];
    for (int c = 0; c < 2; c++) {
        const int n = c == 0 ? 64 : 7;
        sim *cpu = create(&sc, sim_cpu_backend(), "fallback");
        sim *gpu = create(&sc, gpu_cuda_backend(), "fallback");
        for (int k = 0; k < n; k++)
            want[k] = c == 0 ? 1 : (uint8_t)(k == 3);
        const long live = gpu_alloc_live();
        gpu_alloc_fail_at(1); /* the first try at the ring: 64 slots, or 1 */
        int rc = sim_step_batch(gpu, n, want, got);
        gpu_alloc_fail_at(0);
        if (rc != SIM_OK)
            fail_msg("batch with a failed ring allocation: %s", sim_errmsg(gpu));
        /* 32 slots held (on the device: only the totals come back), or none */
        assert_int_equal(gpu_alloc_live(), live + (c == 0 ? 1 : 0));
        for (int k = 0; k < n; k++) {
            sim_stats ref;
            assert_int_equal(sim_step(cpu, want[k], &ref), SIM_OK);
            expect_same(&ref, &got[k], c == 0 ? "half a ring" : "no ring", k);
        }
        /* and the next batch, with the memory there, is whole again */
        assert_int_equal(sim_step_batch(gpu, n, want, got), SIM_OK);
        for (int k = 0; k < n; k++) {
            sim_stats ref;
            assert_int_equal(sim_step(cpu, want[k], &ref), SIM_OK);
            expect_same(&ref, &got[k], "after the fallback", k);
        }
        expect_same_state(cpu, gpu, "fallback");
        sim_destroy(cpu);
        sim_destroy(gpu);
    }
}

/* Interleaving with the per-step path and the other operations: a batch after sim_step, a
 * checksum and a read between batches, a parameter change (a new instance) between them. */
static void test_interleaved(void **state)
{
    (void)state;
    sim_scenario sc;
    scenario(&sc, 61, 39, 1, 0, 505);
    sim *cpu = create(&sc, sim_cpu_backend(), "interleaved");
    sim *gpu = create(&sc, gpu_cuda_backend(), "interleaved");
    static uint8_t want[SIM_STEP_BATCH_MAX];
    static sim_stats got[SIM_STEP_BATCH_MAX];
    hz_rng rng = {77};
    for (int round = 0; round < 6; round++) {
        sim_stats a, b;
        assert_int_equal(sim_step(cpu, 1, &a), SIM_OK);
        assert_int_equal(sim_step(gpu, 1, &b), SIM_OK);
        expect_same(&a, &b, "single step", 0);
        const int n = 3 + (int)hz_below(&rng, 30);
        pattern(5, n, &rng, want);
        assert_int_equal(sim_step_batch(gpu, n, want, got), SIM_OK);
        for (int k = 0; k < n; k++) {
            assert_int_equal(sim_step(cpu, want[k], &a), SIM_OK);
            expect_same(&a, &got[k], "batch after a step", k);
        }
        uint64_t x = 0, y = 1;
        assert_int_equal(sim_checksum(cpu, &x), SIM_OK);
        assert_int_equal(sim_checksum(gpu, &y), SIM_OK);
        assert_int_equal(x, y);
        if (round == 2) {
            sim_scenario changed = *sim_get_scenario(cpu);
            changed.sweeps = 2;
            changed.radius = 3;
            assert_int_equal(sim_set_params(cpu, &changed), SIM_OK);
            assert_int_equal(sim_set_params(gpu, &changed), SIM_OK);
        }
    }
    expect_same_state(cpu, gpu, "interleaved");
    sim_destroy(cpu);
    sim_destroy(gpu);
}

static void test_refuses_bad_lengths(void **state)
{
    (void)state;
    sim_scenario sc;
    scenario(&sc, 40, 30, 1, 1, 606);
    sim *g = create(&sc, gpu_cuda_backend(), "einval");
    static sim_stats out[SIM_STEP_BATCH_MAX + 1];
    static const int bad[] = {0, -5, SIM_STEP_BATCH_MAX + 1};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sim_step_batch(g, bad[i], NULL, out), SIM_EINVAL);
        hz_assert_contains(sim_errmsg(g), "step_batch: n = ");
    }
    assert_int_equal(sim_step_batch(g, 3, NULL, NULL), SIM_EINVAL);
    gpu_tuning t = {0, 0, 0, 33, 0};
    sim_err err = {{0}};
    assert_int_equal(gpu_tune(g, &t, &err), SIM_EINVAL);
    hz_assert_contains(err.msg, "steps_per_graph");
    assert_int_equal(sim_steps_done(g), 0);
    assert_int_equal(sim_step_batch(g, 5, NULL, out), SIM_OK); /* no statistics at all */
    assert_int_equal(sim_steps_done(g), 5);
    assert_int_equal(out[4].step, 5);
    assert_int_equal(out[4].checksum, 0);
    sim_destroy(g);
}

int main(void)
{
    char why[256];
    if (gpu_probe(why, sizeof why) <= 0) {
        printf("test_gpu_batch: skipped: %s\n", why);
        return 77;
    }
    quick = getenv("HZ_GPU_QUICK") != NULL;
    if (getenv("HZ_TEST_FILTER")) /* one case by name, e.g. under compute-sanitizer racecheck */
        cmocka_set_test_filter(getenv("HZ_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refuses_bad_lengths),
        cmocka_unit_test(test_small_world),
        cmocka_unit_test(test_ring_fallbacks),
        cmocka_unit_test(test_interleaved),
        cmocka_unit_test(test_medium_world),
        cmocka_unit_test(test_large_world),
        cmocka_unit_test(test_defer),
        cmocka_unit_test(test_resident_shapes),
        cmocka_unit_test(test_tiny_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
