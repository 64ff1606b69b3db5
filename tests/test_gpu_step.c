/* test_gpu_step.c - the CUDA backend against the CPU oracle, step by step: every shipped
 * scenario at a reduced size, 20 random small scenarios (odd sizes, r = 0..32, every boundary,
 * densities from empty to full, 0..12 sweeps), and one multi-tile world under every horizon mode
 * and tile mapping, also chosen by HORIZON_HZ_MAPPING. Each step compares moved, the checksum
 * and every statistic; the final field and agent positions are compared byte for byte. Skipped
 * (77) without a usable GPU. HZ_GPU_QUICK=1 runs fewer and shorter cases (for
 * compute-sanitizer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <math.h>

#include "gpu_backend.h"
#include "hz_test_util.h"
#include "sim.h"

static int quick;

static int same_float(float a, float b)
{
    return a == b || (a != a && b != b);
}

static int same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

/* Runs both backends from the same initial state for `steps` steps; statistics on two steps of
 * three (the other step exercises the graph without statistics, checked through checksum()). */
static void run_pair(const sim_scenario *sc, int steps, const gpu_tuning *tune, const char *label)
{
    sim *c = NULL, *g = NULL;
    sim_err err = {{0}};
    if (sim_create(sc, sim_cpu_backend(), 2, &c, &err) != SIM_OK)
        fail_msg("%s: cpu create: %s", label, err.msg);
    if (sim_create(sc, gpu_cuda_backend(), 0, &g, &err) != SIM_OK)
        fail_msg("%s: cuda create: %s", label, err.msg);
    if (tune && gpu_tune(g, tune, &err) != SIM_OK)
        fail_msg("%s: gpu_tune: %s", label, err.msg);
    for (int k = 0; k < steps; k++) {
        int want = k % 3 != 1;
        sim_stats a, b;
        if (sim_step(c, want, &a) != SIM_OK)
            fail_msg("%s: cpu step %d: %s", label, k, sim_errmsg(c));
        if (sim_step(g, want, &b) != SIM_OK)
            fail_msg("%s: cuda step %d: %s", label, k, sim_errmsg(g));
        if (a.moved != b.moved)
            fail_msg("%s: step %d: moved cpu %lld cuda %lld", label, k, (long long)a.moved,
                     (long long)b.moved);
        if (want) {
            if (a.checksum != b.checksum)
                fail_msg("%s: step %d: checksum cpu %016llx cuda %016llx", label, k,
                         (unsigned long long)a.checksum, (unsigned long long)b.checksum);
            if (!same_double(a.field_total, b.field_total) ||
                !same_double(a.field_mean, b.field_mean))
                fail_msg("%s: step %d: total cpu %.17g cuda %.17g", label, k, a.field_total,
                         b.field_total);
            if (!same_float(a.field_max, b.field_max))
                fail_msg("%s: step %d: max cpu %.9g cuda %.9g", label, k, (double)a.field_max,
                         (double)b.field_max);
            if (!same_float(a.residual, b.residual))
                fail_msg("%s: step %d: residual cpu %.9g cuda %.9g", label, k,
                         (double)a.residual, (double)b.residual);
        } else {
            uint64_t x = 0, y = 1;
            assert_int_equal(sim_checksum(c, &x), SIM_OK);
            assert_int_equal(sim_checksum(g, &y), SIM_OK);
            if (x != y)
                fail_msg("%s: step %d: checksum() cpu %016llx cuda %016llx", label, k,
                         (unsigned long long)x, (unsigned long long)y);
        }
    }
    size_t cells = (size_t)sc->width * sc->height;
    int64_t n = sim_agent_count(c);
    float *fa = malloc(cells * sizeof *fa), *fb = malloc(cells * sizeof *fb);
    uint32_t *pa = malloc((size_t)(n + 1) * sizeof *pa), *pb = malloc((size_t)(n + 1) * sizeof *pb);
    assert_non_null(fa);
    assert_non_null(fb);
    assert_non_null(pa);
    assert_non_null(pb);
    assert_int_equal(sim_read_field(c, fa), SIM_OK);
    assert_int_equal(sim_read_field(g, fb), SIM_OK);
    assert_int_equal(sim_read_agents(c, pa), SIM_OK);
    assert_int_equal(sim_read_agents(g, pb), SIM_OK);
    if (memcmp(fa, fb, cells * sizeof *fa) != 0)
        fail_msg("%s: final fields differ", label);
    if (n > 0 && memcmp(pa, pb, (size_t)n * sizeof *pa) != 0)
        fail_msg("%s: final agent cells differ", label);
    free(fa);
    free(fb);
    free(pa);
    free(pb);
    sim_destroy(c);
    sim_destroy(g);
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

static void test_shipped_scenarios(void **state)
{
    (void)state;
    const char *dir = HZ_SOURCE_DIR "/assets/scenarios";
    DIR *d = opendir(dir);
    assert_non_null(d);
    int seen = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        sim_scenario sc;
        sim_err err = {{0}};
        sim_scenario_defaults(&sc);
        if (sim_scenario_parse_file(&sc, path, &err) != SIM_OK)
            fail_msg("%s: %s", path, err.msg);
        /* Reduced size, odd sides; the agent count keeps its share of the cells. */
        int w = sc.width > 67 ? 67 : sc.width, h = sc.height > 53 ? 53 : sc.height;
        double share = sc.count >= 0 ? (double)sc.count / ((double)sc.width * sc.height) : -1.0;
        if (share >= 0.0) /* first: each --set is checked against the current world */
            setf(&sc, "agents.count=%lld", (long long)(share * w * h));
        setf(&sc, "world.width=%d", w);
        setf(&sc, "world.height=%d", h);
        if (sim_scenario_validate(&sc, &err) != SIM_OK)
            fail_msg("%s reduced: %s", path, err.msg);
        run_pair(&sc, quick ? 4 : 16, NULL, e->d_name);
        seen++;
    }
    closedir(d);
    assert_true(seen >= 3);
}

static void test_random_scenarios(void **state)
{
    (void)state;
    hz_rng rng = {0x5EEDF00Dull};
    static const double densities[] = {0.0, 1.0, 0.5, 0.9, 0.02, 0.2};
    static const int radii[] = {0, 32, 1, 2, 3, 5, 8, 13, 17, 24};
    const int count = quick ? 6 : 20;
    for (int i = 0; i < count; i++) {
        sim_scenario sc;
        sim_scenario_defaults(&sc);
        int w = 1 + 2 * (int)hz_below(&rng, 45), h = 1 + 2 * (int)hz_below(&rng, 40);
        if (i == 3)
            w = h = 1; /* one cell */
        if (i == 4)
            w = 5, h = 3; /* a disk far wider than the grid */
        int boundary = i % 3;
        double density = i < 6 ? densities[i] : (double)hz_below(&rng, 1000) / 1000.0;
        int r = i < 10 ? radii[i] : (int)hz_below(&rng, 33);
        int sweeps = (int)hz_below(&rng, 13);
        setf(&sc, "world.width=%d", w);
        setf(&sc, "world.height=%d", h);
        set(&sc, boundary == 0 ? "world.boundary=periodic"
                 : boundary == 1 ? "world.boundary=wall"
                                 : "world.boundary=fixed");
        setf(&sc, "world.fixed_top=%g", hz_uniform(&rng, -5, 5));
        setf(&sc, "world.fixed_bottom=%g", hz_uniform(&rng, -5, 5));
        setf(&sc, "world.fixed_left=%g", hz_uniform(&rng, -5, 5));
        setf(&sc, "world.fixed_right=%g", hz_uniform(&rng, -5, 5));
        setf(&sc, "field.diffusion=%g", hz_uniform(&rng, 0.05f, 1.0f));
        setf(&sc, "field.sweeps=%d", sweeps);
        setf(&sc, "field.decay=%g", i % 4 == 0 ? 0.0 : (double)hz_uniform(&rng, 0.0f, 0.3f));
        setf(&sc, "field.initial=%g", hz_uniform(&rng, -1, 1));
        setf(&sc, "field.init_noise=%g", hz_uniform(&rng, 0, 3));
        set(&sc, "agents.count=-1");
        setf(&sc, "agents.density=%.4f", density);
        setf(&sc, "agents.radius=%d", r);
        setf(&sc, "agents.deposit=%g", i % 5 == 0 ? 0.0 : (double)hz_uniform(&rng, -1, 2));
        setf(&sc, "agents.noise=%g", i % 2 ? (double)hz_uniform(&rng, 0, 1) : 0.0);
        set(&sc, i % 4 == 1 ? "agents.placement=center" : "agents.placement=random");
        setf(&sc, "run.seed=%llu", (unsigned long long)hz_next(&rng));
        sim_err err = {{0}};
        if (sim_scenario_validate(&sc, &err) != SIM_OK)
            fail_msg("random scenario %d: %s", i, err.msg);
        char label[128];
        snprintf(label, sizeof label, "random %d (%dx%d %s r=%d density %.3f sweeps %d)", i, w, h,
                 sim_boundary_name(boundary), r, density, sweeps);
        run_pair(&sc, quick ? 4 : 10, NULL, label);
    }
}

/* A world of many tiles in both horizon modes and every mapping (SELL runs as dynamic in dense
 * mode), with the fusion depth varied. */
static void test_modes_and_mappings(void **state)
{
    (void)state;
    static const char *const bnd[] = {"world.boundary=periodic", "world.boundary=wall"};
    for (int b = 0; b < 2; b++)
        for (int mode = GPU_HMODE_DENSE; mode <= GPU_HMODE_SPARSE; mode++)
            for (int map = GPU_MAP_RAKE; map <= GPU_MAP_SELL; map++) {
                sim_scenario sc;
                sim_scenario_defaults(&sc);
                set(&sc, quick ? "world.width=131" : "world.width=301");
                set(&sc, quick ? "world.height=97" : "world.height=257");
                set(&sc, bnd[b]);
                set(&sc, "agents.density=0.15");
                set(&sc, b ? "agents.radius=9" : "agents.radius=6");
                set(&sc, "field.sweeps=5");
                set(&sc, "agents.noise=0.2");
                setf(&sc, "run.seed=%d", 100 + map);
                /* fuse_max 3, 5, 7, 1, 3 (allowed 1..8) */
                gpu_tuning t = {mode, map, 1 + (map * 2) % 8, 0, 0};
                char label[96];
                snprintf(label, sizeof label, "%s mode %d mapping %d fuse %d", bnd[b], mode, map,
                         t.fuse_max);
                run_pair(&sc, quick ? 3 : 8, &t, label);
            }
}

/* HORIZON_HZ_MAPPING=N picks the mapping of instances whose tuning leaves it automatic (a
 * measuring aid): with 5 (SELL) the steps are still the CPU's; a value outside 1..5 fails the
 * create with a message naming the variable. The variable's earlier value is put back. */
static void test_mapping_from_environment(void **state)
{
    (void)state;
    const char *before = getenv("HORIZON_HZ_MAPPING");
    char *saved = before ? strdup(before) : NULL;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    set(&sc, quick ? "world.width=131" : "world.width=301");
    set(&sc, quick ? "world.height=97" : "world.height=257");
    set(&sc, "agents.density=0.05");
    set(&sc, "agents.radius=8");
    assert_int_equal(setenv("HORIZON_HZ_MAPPING", "5", 1), 0);
    run_pair(&sc, quick ? 3 : 8, NULL, "HORIZON_HZ_MAPPING=5");
    static const char *const bad[] = {"9", "0", "sell", "3x"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(setenv("HORIZON_HZ_MAPPING", bad[i], 1), 0);
        sim *g = NULL;
        sim_err err = {{0}};
        assert_int_equal(sim_create(&sc, gpu_cuda_backend(), 0, &g, &err), SIM_EINVAL);
        assert_null(g);
        hz_assert_contains(err.msg, "HORIZON_HZ_MAPPING");
    }
    if (saved)
        assert_int_equal(setenv("HORIZON_HZ_MAPPING", saved, 1), 0);
    else
        assert_int_equal(unsetenv("HORIZON_HZ_MAPPING"), 0);
    free(saved);
}

static void test_tune_rejects(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    set(&sc, "world.width=40");
    set(&sc, "world.height=30");
    sim *g = NULL;
    sim_err err = {{0}};
    assert_int_equal(sim_create(&sc, gpu_cuda_backend(), 0, &g, &err), SIM_OK);
    gpu_tuning bad = {7, 0, 0, 0, 0};
    assert_int_equal(gpu_tune(g, &bad, &err), SIM_EINVAL);
    hz_assert_contains(err.msg, "horizon_mode");
    gpu_tuning bad2 = {0, 0, 9, 0, 0};
    assert_int_equal(gpu_tune(g, &bad2, &err), SIM_EINVAL);
    gpu_tuning bad3 = {0, GPU_MAP_SELL + 1, 0, 0, 0};
    assert_int_equal(gpu_tune(g, &bad3, &err), SIM_EINVAL);
    hz_assert_contains(err.msg, "mapping");
    gpu_tuning sell = {0, GPU_MAP_SELL, 0, 0, 0};
    if (gpu_tune(g, &sell, &err) != SIM_OK)
        fail_msg("gpu_tune to the SELL mapping: %s", err.msg);
    uint32_t cell = 40 * 30;
    int64_t sums[9];
    assert_int_equal(sim_horizon(g, &cell, 1, sums), SIM_EINVAL);
    sim_destroy(g);
}

/* sim_pin_host on the CUDA backend: a pinned buffer takes the same field and agents as an
 * ordinary one, and can be unpinned after the simulation is gone. */
static void test_pinned_reads(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    set(&sc, "world.width=301");
    set(&sc, "world.height=77");
    sim *g = NULL;
    sim_err err = {{0}};
    assert_int_equal(sim_create(&sc, gpu_cuda_backend(), 0, &g, &err), SIM_OK);
    sim_stats st;
    for (int k = 0; k < 3; k++)
        assert_int_equal(sim_step(g, 0, &st), SIM_OK);
    const size_t cells = 301 * 77;
    const int64_t n = sim_agent_count(g);
    float *fa = malloc(cells * sizeof *fa), *fb = malloc(cells * sizeof *fb);
    uint32_t *aa = malloc((size_t)n * sizeof *aa), *ab = malloc((size_t)n * sizeof *ab);
    assert_true(fa && fb && aa && ab && n > 0);
    assert_int_equal(sim_pin_host(gpu_cuda_backend(), fb, cells * sizeof *fb), 1);
    assert_int_equal(sim_pin_host(gpu_cuda_backend(), ab, (size_t)n * sizeof *ab), 1);
    assert_int_equal(sim_read_field(g, fa), SIM_OK);
    assert_int_equal(sim_read_field(g, fb), SIM_OK);
    assert_int_equal(sim_read_agents(g, aa), SIM_OK);
    assert_int_equal(sim_read_agents(g, ab), SIM_OK);
    assert_memory_equal(fa, fb, cells * sizeof *fa);
    assert_memory_equal(aa, ab, (size_t)n * sizeof *aa);
    sim_destroy(g);
    sim_unpin_host(gpu_cuda_backend(), fb);
    sim_unpin_host(gpu_cuda_backend(), ab);
    free(fa);
    free(fb);
    free(aa);
    free(ab);
}

/* Reads beside the steps (sim_read_field_begin): each copy holds the field of its begin, though
 * the steps after it change the field; two in flight at once; a batch of steps after a begin,
 * and a read from a world whose batches take the resident kernel. */
static void check_reads_aside(const char *width, const char *height)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    set(&sc, width);
    set(&sc, height);
    sim *g = NULL;
    sim_err err = {{0}};
    assert_int_equal(sim_create(&sc, gpu_cuda_backend(), 0, &g, &err), SIM_OK);
    const size_t cells = (size_t)sc.width * (size_t)sc.height, bytes = cells * sizeof(float);
    float *want[2], *got[2], *now = malloc(bytes);
    assert_non_null(now);
    for (int i = 0; i < 2; i++) {
        want[i] = malloc(bytes);
        got[i] = malloc(bytes);
        assert_true(want[i] && got[i]);
        assert_int_equal(sim_pin_host(gpu_cuda_backend(), got[i], bytes), 1);
    }
    sim_stats st[8];
    int ticket[2];
    for (int i = 0; i < 2; i++) {
        assert_int_equal(sim_step(g, 0, &st[0]), SIM_OK);
        assert_int_equal(sim_read_field(g, want[i]), SIM_OK);
        assert_int_equal(sim_read_field_begin(g, got[i], &ticket[i]), SIM_OK);
        assert_true(ticket[i] >= 0); /* a copy beside the steps, not a plain read */
        assert_int_equal(sim_step_batch(g, 8, NULL, st), SIM_OK);
    }
    for (int i = 0; i < 2; i++) {
        assert_int_equal(sim_read_wait(g, ticket[i], &err), SIM_OK);
        assert_memory_equal(got[i], want[i], bytes);
    }
    /* the steps did change the field, so the copies could have been wrong */
    assert_int_equal(sim_read_field(g, now), SIM_OK);
    assert_memory_not_equal(now, want[1], bytes);
    assert_memory_not_equal(want[0], want[1], bytes);
    sim_destroy(g);
    for (int i = 0; i < 2; i++) {
        sim_unpin_host(gpu_cuda_backend(), got[i]);
        free(want[i]);
        free(got[i]);
    }
    free(now);
}

/* A begin whose snapshot cannot be allocated reads at once (ticket -1, the right field); the
 * next begin makes the snapshot and copies beside the steps; nothing stays allocated after
 * destroy. */
static void test_read_without_snapshot(void **state)
{
    (void)state;
    const long base = gpu_alloc_live();
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    set(&sc, "world.width=128");
    set(&sc, "world.height=40");
    sim *g = NULL;
    sim_err err = {{0}};
    assert_int_equal(sim_create(&sc, gpu_cuda_backend(), 0, &g, &err), SIM_OK);
    const size_t bytes = 128 * 40 * sizeof(float);
    float *want = malloc(bytes), *got = malloc(bytes);
    assert_true(want && got);
    sim_stats st;
    assert_int_equal(sim_step(g, 0, &st), SIM_OK);
    assert_int_equal(sim_read_field(g, want), SIM_OK);
    int ticket = 7;
    gpu_alloc_fail_at(1); /* the snapshot, the begin's first allocation */
    assert_int_equal(sim_read_field_begin(g, got, &ticket), SIM_OK);
    gpu_alloc_fail_at(0);
    assert_int_equal(ticket, -1);
    assert_memory_equal(got, want, bytes);
    assert_int_equal(sim_step(g, 0, &st), SIM_OK);
    assert_int_equal(sim_read_field(g, want), SIM_OK);
    assert_int_equal(sim_read_field_begin(g, got, &ticket), SIM_OK);
    assert_true(ticket >= 0);
    assert_int_equal(sim_step(g, 0, &st), SIM_OK);
    assert_int_equal(sim_read_wait(g, ticket, &err), SIM_OK);
    assert_memory_equal(got, want, bytes);
    sim_destroy(g);
    assert_int_equal(gpu_alloc_live(), base);
    free(want);
    free(got);
}

static void test_reads_aside(void **state)
{
    (void)state;
    check_reads_aside("world.width=301", "world.height=77");
    check_reads_aside("world.width=64", "world.height=64"); /* resident batches */
}

/* A state whose field is -0 on the left half, -1 .. -5 on the right, and with pos, +0 on two
 * columns at a quarter of the width; 8 agents on the right half that deposit -1 (no cell ever
 * grows above zero, so the max is a zero for these steps). */
static sim *zero_sign_world(const sim_scenario *sc, const sim_backend_ops *ops, int threads,
                            int pos)
{
    const int w = sc->width, h = sc->height;
    float *field = malloc((size_t)w * h * sizeof *field);
    assert_non_null(field);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            field[(size_t)y * w + x] = x >= w / 2              ? -1.0f - (float)(x % 5)
                                       : pos && x / 2 == w / 8 ? 0.0f
                                                               : -0.0f;
    uint32_t agents[8];
    for (int i = 0; i < 8; i++)
        agents[i] = (uint32_t)((h / 2 + i % 2) * w + w / 2 + w / 4 + i);
    sim_scenario s2 = *sc;
    s2.count = 8;
    sim *s = NULL;
    sim_err err = {{0}};
    if (sim_create_from_state(&s2, ops, threads, 0, field, agents, 8, &s, &err) != SIM_OK)
        fail_msg("sim_create_from_state: %s", err.msg);
    free(field);
    return s;
}

/* The field's max ranks -0 below +0 on both backends: a zero max is +0 when a +0 is anywhere
 * in the field, else -0, on the paths that take the max (the one-block resident batches, the
 * terms in the fused pass, wide and narrow, deferred batches, batches with the column sums
 * aside, the separate statistics kernel without sweeps), against the CPU with two threads and
 * the sign the final field calls for. Eight steps of two sweeps spread the negative values 16
 * columns, short of the +0 columns, so the max stays a zero. */
static void test_max_zero_sign(void **state)
{
    (void)state;
    const struct {
        int w, h, boundary, sweeps;
    } worlds[] = {
        {96, 40, SIM_BOUNDARY_PERIODIC, 2},   {200, 150, SIM_BOUNDARY_WALL, 2},
        {512, 96, SIM_BOUNDARY_PERIODIC, 2},  {512, 96, SIM_BOUNDARY_PERIODIC, 0},
        {1030, 70, SIM_BOUNDARY_PERIODIC, 2}, {1024, 640, SIM_BOUNDARY_PERIODIC, 2},
    };
    for (size_t k = 0; k < sizeof worlds / sizeof worlds[0]; k++)
        for (int pos = 0; pos <= 1; pos++) {
            sim_scenario sc;
            sim_scenario_defaults(&sc);
            sc.width = worlds[k].w;
            sc.height = worlds[k].h;
            sc.boundary = worlds[k].boundary;
            sc.sweeps = worlds[k].sweeps;
            sc.deposit = -1.0f;
            sc.radius = 2;
            sc.init_noise = 0.0f;
            sim *c = zero_sign_world(&sc, sim_cpu_backend(), 2, pos);
            sim *g = zero_sign_world(&sc, gpu_cuda_backend(), 0, pos);
            enum { SINGLE = 2, BATCH = 6 };
            sim_stats a[BATCH], b[BATCH];
            uint8_t want[BATCH];
            memset(want, 1, sizeof want);
            for (int j = 0; j < SINGLE + 1; j++) {
                const int n = j < SINGLE ? 1 : BATCH;
                if (n == 1 ? sim_step(c, 1, a) : sim_step_batch(c, n, want, a))
                    fail_msg("cpu step: %s", sim_errmsg(c));
                if (n == 1 ? sim_step(g, 1, b) : sim_step_batch(g, n, want, b))
                    fail_msg("cuda step: %s", sim_errmsg(g));
                for (int i = 0; i < n; i++)
                    if (memcmp(&a[i].field_max, &b[i].field_max, sizeof(float)) != 0)
                        fail_msg("%dx%d pos %d step %lld: max cpu %g (sign %d) cuda %g (sign %d)",
                                 worlds[k].w, worlds[k].h, pos, (long long)a[i].step,
                                 (double)a[i].field_max, signbit(a[i].field_max) != 0,
                                 (double)b[i].field_max, signbit(b[i].field_max) != 0);
            }
            /* the last step's max from its field: a zero, signed as the rule says */
            const size_t cells = (size_t)sc.width * sc.height;
            float *f = malloc(cells * sizeof *f);
            assert_non_null(f);
            assert_int_equal(sim_read_field(g, f), SIM_OK);
            int any_pos = 0;
            for (size_t i = 0; i < cells; i++) {
                uint32_t bits;
                memcpy(&bits, &f[i], sizeof bits);
                any_pos |= bits == 0u;
            }
            const float last = b[BATCH - 1].field_max;
            if (last != 0.0f || (signbit(last) != 0) != !any_pos || any_pos != pos)
                fail_msg("%dx%d pos %d: final max %g (sign %d), +0 in the field: %d",
                         worlds[k].w, worlds[k].h, pos, (double)last, signbit(last) != 0,
                         any_pos);
            free(f);
            sim_destroy(c);
            sim_destroy(g);
        }
}

int main(void)
{
    char why[256];
    if (gpu_probe(why, sizeof why) <= 0) {
        printf("test_gpu_step: skipped: %s\n", why);
        return 77;
    }
    quick = getenv("HZ_GPU_QUICK") != NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tune_rejects),
        cmocka_unit_test(test_pinned_reads),
        cmocka_unit_test(test_reads_aside),
        cmocka_unit_test(test_read_without_snapshot),
        cmocka_unit_test(test_shipped_scenarios),
        cmocka_unit_test(test_random_scenarios),
        cmocka_unit_test(test_modes_and_mappings),
        cmocka_unit_test(test_mapping_from_environment),
        cmocka_unit_test(test_max_zero_sign),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
