/* test_sim.c - the simulation object as the one door to a backend: sim_compose on the CPU backend
 * gives the bytes of the old host path (read the field and agents, render_frame_occupancy,
 * render_field_max, render_frame_compose) for an odd-sized world, every layer, fitted and
 * zoomed views and both range modes; a backend with a compose op is called instead of the host
 * path; bad views are refused; a backend table of another version, or one missing a member,
 * is refused before anything is built; and sim_step_batch gives what sim_step gives, step for
 * step, and refuses lengths outside 1 .. SIM_STEP_BATCH_MAX. */
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
#include "render_frame.h"
#include "sim.h"

enum { FW = 37, FH = 23 }; /* odd on both sides: no view divides it evenly */

static void scenario(sim_scenario *sc)
{
    sim_scenario_defaults(sc);
    sc->width = FW;
    sc->height = FH;
    sc->count = 90;
    sc->radius = 3;
    sc->seed = 11;
    sc->boundary = SIM_BOUNDARY_PERIODIC;
}

static sim *make(const sim_backend_ops *ops, int steps)
{
    sim_scenario sc;
    scenario(&sc);
    sim *s = NULL;
    sim_err err = {{0}};
    if (sim_create(&sc, ops, 2, &s, &err) != SIM_OK)
        fail_msg("create: %s", err.msg);
    for (int k = 0; k < steps; k++) {
        sim_stats st;
        if (sim_step(s, 0, &st) != SIM_OK)
            fail_msg("step %d: %s", k, sim_errmsg(s));
    }
    return s;
}

/* The frame as app_frames composed it before sim_compose existed. */
static void old_path(sim *s, const sim_view *v, uint8_t *rgba)
{
    int64_t cells = (int64_t)FW * FH, n = sim_agent_count(s);
    float *field = malloc((size_t)cells * sizeof *field);
    uint32_t *agents = malloc((size_t)(n > 0 ? n : 1) * sizeof *agents);
    uint8_t *occ = malloc((size_t)cells);
    assert_true(field && agents && occ);
    assert_int_equal(sim_read_field(s, field), SIM_OK);
    assert_int_equal(sim_read_agents(s, agents), SIM_OK);
    render_frame_occupancy(agents, n, occ, cells);
    render_frame_compose(v, field, FW, FH, occ, render_field_max(field, cells), rgba);
    free(field);
    free(agents);
    free(occ);
}

static void expect_same(sim *s, const sim_view *v, const char *what)
{
    size_t bytes = (size_t)v->w * (size_t)v->h * 4;
    uint8_t *want = malloc(bytes), *got = malloc(bytes);
    assert_true(want && got);
    old_path(s, v, want);
    memset(got, 0xa5, bytes);
    if (sim_compose(s, v, got) != SIM_OK)
        fail_msg("%s: compose: %s", what, sim_errmsg(s));
    for (size_t i = 0; i < bytes; i++)
        if (want[i] != got[i])
            fail_msg("%s: layer %d %dx%d range %g: pixel %zu channel %zu: old %u sim_compose %u",
                     what, v->layer, v->w, v->h, (double)v->range_max, i / 4, i % 4, want[i],
                     got[i]);
    free(want);
    free(got);
}

static void test_compose_matches_host_path(void **state)
{
    (void)state;
    sim *s = make(sim_cpu_backend(), 3);
    assert_false(sim_compose_in_backend(s));
    static const int sizes[][2] = {{37, 23}, {111, 69}, {64, 64}, {13, 41}, {1, 1}, {500, 9}};
    static const float ranges[] = {0.0f, 0.37f};
    for (int i = 0; i < 6; i++)
        for (int layer = SIM_LAYER_FIELD_AGENTS; layer <= SIM_LAYER_AGENTS; layer++)
            for (int r = 0; r < 2; r++) {
                sim_view v;
                render_view_init(&v, (i + layer) % SIM_CMAP_COUNT, ranges[r]);
                render_view_fit(&v, FW, FH, sizes[i][0], sizes[i][1]);
                v.layer = layer;
                expect_same(s, &v, "fit");
            }
    /* Zoomed in and shifted so that the world leaves the image on two sides. */
    sim_view v;
    render_view_init(&v, SIM_CMAP_MAGMA, 0.0f);
    v.w = 123;
    v.h = 77;
    v.x0 = -5.25;
    v.y0 = 9.5;
    v.scale = 0.211;
    expect_same(s, &v, "zoom");
    /* The host buffers are kept and refilled: more steps, the same comparison. */
    for (int k = 0; k < 2; k++) {
        sim_stats st;
        assert_int_equal(sim_step(s, 1, &st), SIM_OK);
    }
    expect_same(s, &v, "after more steps");
    sim_destroy(s);
}

/* A backend that composes: the CPU table with a compose op that paints a marker. */
static int composed;
static int marker_compose(void *b, const sim_view *v, uint8_t *rgba, sim_err *err)
{
    (void)b;
    (void)err;
    memset(rgba, 0x3c, (size_t)v->w * (size_t)v->h * 4);
    composed++;
    return SIM_OK;
}

static int failing_compose(void *b, const sim_view *v, uint8_t *rgba, sim_err *err)
{
    (void)b;
    (void)v;
    (void)rgba;
    return sim_err_set(err, SIM_EDEVICE, "the device fell over");
}

static void test_compose_uses_the_backend_op(void **state)
{
    (void)state;
    sim_backend_ops ops = *sim_cpu_backend();
    ops.compose = marker_compose;
    sim *s = make(&ops, 1);
    assert_true(sim_compose_in_backend(s));
    sim_view v;
    render_view_init(&v, SIM_CMAP_VIRIDIS, 0.0f);
    render_view_fit(&v, FW, FH, 20, 10);
    uint8_t px[20 * 10 * 4];
    composed = 0;
    assert_int_equal(sim_compose(s, &v, px), SIM_OK);
    assert_int_equal(composed, 1);
    for (size_t i = 0; i < sizeof px; i++)
        assert_int_equal(px[i], 0x3c);
    sim_destroy(s);

    /* The op's status and message come back through sim_errmsg. */
    ops.compose = failing_compose;
    s = make(&ops, 0);
    assert_int_equal(sim_compose(s, &v, px), SIM_EDEVICE);
    hz_assert_contains(sim_errmsg(s), "the device fell over");
    sim_destroy(s);
}

static void test_compose_refuses_bad_views(void **state)
{
    (void)state;
    sim_backend_ops ops = *sim_cpu_backend();
    ops.compose = marker_compose;
    const sim_backend_ops *tables[] = {sim_cpu_backend(), &ops};
    uint8_t px[8 * 8 * 4];
    for (int t = 0; t < 2; t++) {
        sim *s = make(tables[t], 0);
        sim_view good;
        render_view_init(&good, SIM_CMAP_GRAY, 0.0f);
        render_view_fit(&good, FW, FH, 8, 8);
        composed = 0;
        sim_view v = good;
        v.layer = SIM_LAYER_HORIZON; /* the viewer's, drawn from horizon sums */
        assert_int_equal(sim_compose(s, &v, px), SIM_EINVAL);
        hz_assert_contains(sim_errmsg(s), "layer 3");
        v = good;
        v.layer = -1;
        assert_int_equal(sim_compose(s, &v, px), SIM_EINVAL);
        v = good;
        v.w = 0;
        assert_int_equal(sim_compose(s, &v, px), SIM_EINVAL);
        hz_assert_contains(sim_errmsg(s), "0x8");
        v = good;
        v.h = -3;
        assert_int_equal(sim_compose(s, &v, px), SIM_EINVAL);
        v = good;
        v.scale = 0.0;
        assert_int_equal(sim_compose(s, &v, px), SIM_EINVAL);
        hz_assert_contains(sim_errmsg(s), "scale");
        v = good;
        v.scale = INFINITY;
        assert_int_equal(sim_compose(s, &v, px), SIM_EINVAL);
        v = good;
        v.x0 = NAN;
        assert_int_equal(sim_compose(s, &v, px), SIM_EINVAL);
        assert_int_equal(composed, 0); /* refused before the backend saw it */
        assert_int_equal(sim_compose(s, &good, px), SIM_OK);
        sim_destroy(s);
    }
}

static void expect_refused(const sim_backend_ops *ops, const char *needle)
{
    sim_scenario sc;
    scenario(&sc);
    sim *s = (sim *)&sc; /* not NULL, so that the test sees create clear it */
    sim_err err = {{0}};
    assert_int_equal(sim_create(&sc, ops, 1, &s, &err), SIM_EINVAL);
    assert_null(s);
    hz_assert_contains(err.msg, needle);
    float field[FW * FH] = {0};
    uint32_t agents[1] = {0};
    s = (sim *)&sc;
    memset(&err, 0, sizeof err);
    assert_int_equal(sim_create_from_state(&sc, ops, 1, 0, field, agents, 1, &s, &err),
                     SIM_EINVAL);
    assert_null(s);
    hz_assert_contains(err.msg, needle);
}

static void test_backend_table_is_checked(void **state)
{
    (void)state;
    /* pin_host is optional: the CPU backend has none, so nothing is pinned */
    float buf[16];
    assert_int_equal(sim_pin_host(sim_cpu_backend(), buf, sizeof buf), 0);
    sim_unpin_host(sim_cpu_backend(), buf);
    assert_int_equal(sim_pin_host(NULL, buf, sizeof buf), 0);
    sim_backend_ops ops = *sim_cpu_backend();
    assert_int_equal(ops.version, SIM_BACKEND_VERSION);
    ops.version = SIM_BACKEND_VERSION + 1;
    expect_refused(&ops, "version");
    ops.version = 0; /* a table written before the field existed would start with a pointer */
    expect_refused(&ops, "version 0");
    ops = *sim_cpu_backend();
    ops.step = NULL;
    expect_refused(&ops, "\"cpu\" has no step");
    ops = *sim_cpu_backend();
    ops.paint = NULL;
    expect_refused(&ops, "no paint");
    ops = *sim_cpu_backend();
    ops.step_batch = NULL;
    expect_refused(&ops, "no step_batch");
    expect_refused(NULL, "no backend table");
    /* compose is the one optional member */
    ops = *sim_cpu_backend();
    assert_null(ops.compose);
    sim *s = make(&ops, 0);
    sim_destroy(s);
}

/* Field by field, so that a failure says which; then the bytes (both were zeroed first). */
static void expect_same_stats(const sim_stats *a, const sim_stats *b, const char *what, int k)
{
    if (a->step != b->step || a->agents != b->agents || a->moved != b->moved ||
        a->checksum != b->checksum || a->field_max != b->field_max ||
        a->residual != b->residual || a->field_total != b->field_total ||
        a->field_mean != b->field_mean)
        fail_msg("%s: step %lld (batch index %d): step %lld/%lld moved %lld/%lld checksum "
                 "%016llx/%016llx total %.17g/%.17g max %.9g/%.9g residual %.9g/%.9g", what,
                 (long long)a->step, k, (long long)a->step, (long long)b->step,
                 (long long)a->moved, (long long)b->moved, (unsigned long long)a->checksum,
                 (unsigned long long)b->checksum, a->field_total, b->field_total,
                 (double)a->field_max, (double)b->field_max, (double)a->residual,
                 (double)b->residual);
    assert_memory_equal(a, b, sizeof *a);
}

/* sim_step_batch on the CPU backend gives, step for step, what sim_step gives: batch lengths 1,
 * 2, 7, 64 and 256 with statistics never, always, on alternate steps, at random and (NULL) not
 * at all; the step counter advances by n; the state afterwards is the same. */
/* Without a read_field_begin (the CPU backend), sim_read_field_begin reads at once: ticket -1,
 * the field of the begin even after more steps, and sim_read_wait(-1) has nothing to wait for. */
static void test_read_begin_without_the_op(void **state)
{
    (void)state;
    assert_null(sim_cpu_backend()->read_field_begin);
    sim *s = make(sim_cpu_backend(), 2);
    float want[FW * FH], got[FW * FH], later[FW * FH];
    int ticket = 5;
    assert_int_equal(sim_read_field(s, want), SIM_OK);
    assert_int_equal(sim_read_field_begin(s, got, &ticket), SIM_OK);
    assert_int_equal(ticket, -1);
    sim_stats st;
    assert_int_equal(sim_step(s, 0, &st), SIM_OK);
    sim_err err = {{0}};
    assert_int_equal(sim_read_wait(s, ticket, &err), SIM_OK);
    assert_memory_equal(got, want, sizeof want);
    assert_int_equal(sim_read_field(s, later), SIM_OK);
    assert_memory_not_equal(later, want, sizeof want);
    sim_destroy(s);
}

static void test_step_batch_matches_steps(void **state)
{
    (void)state;
    sim *one = make(sim_cpu_backend(), 0), *many = make(sim_cpu_backend(), 0);
    static const int lengths[] = {1, 2, 7, 64, 256, 3};
    static uint8_t want[SIM_STEP_BATCH_MAX];
    static sim_stats got[SIM_STEP_BATCH_MAX];
    hz_rng rng = {0xBA7C4ull};
    for (int li = 0; li < 6; li++) {
        for (int pattern = 0; pattern < 5; pattern++) {
            const int n = lengths[li];
            for (int k = 0; k < n; k++)
                want[k] = pattern == 0   ? 0
                          : pattern == 1 ? 1
                          : pattern == 2 ? (uint8_t)(k % 2)
                                         : (uint8_t)(hz_below(&rng, 3) == 0);
            const uint8_t *w = pattern == 4 ? NULL : want;
            const int64_t before = sim_steps_done(many);
            if (sim_step_batch(many, n, w, got) != SIM_OK)
                fail_msg("batch of %d: %s", n, sim_errmsg(many));
            assert_int_equal(sim_steps_done(many), before + n);
            for (int k = 0; k < n; k++) {
                sim_stats ref;
                assert_int_equal(sim_step(one, w ? w[k] : 0, &ref), SIM_OK);
                char what[64];
                snprintf(what, sizeof what, "batch of %d, pattern %d", n, pattern);
                expect_same_stats(&ref, &got[k], what, k);
            }
        }
    }
    uint64_t a = 0, b = 1;
    assert_int_equal(sim_checksum(one, &a), SIM_OK);
    assert_int_equal(sim_checksum(many, &b), SIM_OK);
    assert_int_equal(a, b);
    sim_destroy(one);
    sim_destroy(many);
}

static void test_step_batch_refuses_bad_lengths(void **state)
{
    (void)state;
    sim *s = make(sim_cpu_backend(), 2);
    static sim_stats out[SIM_STEP_BATCH_MAX + 1];
    static const int bad[] = {0, -1, SIM_STEP_BATCH_MAX + 1, 1 << 30};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(sim_step_batch(s, bad[i], NULL, out), SIM_EINVAL);
        hz_assert_contains(sim_errmsg(s), "step_batch: n = ");
        assert_int_equal(sim_steps_done(s), 2);
    }
    assert_int_equal(sim_step_batch(s, 4, NULL, NULL), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "NULL output");
    assert_int_equal(sim_steps_done(s), 2);
    /* the limit itself is fine */
    assert_int_equal(sim_step_batch(s, SIM_STEP_BATCH_MAX, NULL, out), SIM_OK);
    assert_int_equal(sim_steps_done(s), 2 + SIM_STEP_BATCH_MAX);
    assert_int_equal(out[SIM_STEP_BATCH_MAX - 1].step, 2 + SIM_STEP_BATCH_MAX);
    assert_int_equal(out[0].step, 3);
    assert_int_equal(out[0].agents, sim_agent_count(s));
    sim_destroy(s);
}

/* A backend's failure inside a batch comes back with its message. */
static int failing_batch(void *b, int64_t step, int n, const uint8_t *want, sim_stats *out,
                         sim_err *err)
{
    (void)b;
    (void)n;
    (void)want;
    (void)out;
    return sim_err_set(err, SIM_EDEVICE, "the batch from step %lld fell over", (long long)step);
}

static void test_step_batch_failure(void **state)
{
    (void)state;
    sim_backend_ops ops = *sim_cpu_backend();
    ops.step_batch = failing_batch;
    sim *s = make(&ops, 1);
    sim_stats out[4];
    assert_int_equal(sim_step_batch(s, 4, NULL, out), SIM_EDEVICE);
    hz_assert_contains(sim_errmsg(s), "the batch from step 1 fell over");
    assert_int_equal(sim_steps_done(s), 1);
    sim_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compose_matches_host_path),
        cmocka_unit_test(test_compose_uses_the_backend_op),
        cmocka_unit_test(test_compose_refuses_bad_views),
        cmocka_unit_test(test_backend_table_is_checked),
        cmocka_unit_test(test_read_begin_without_the_op),
        cmocka_unit_test(test_step_batch_matches_steps),
        cmocka_unit_test(test_step_batch_refuses_bad_lengths),
        cmocka_unit_test(test_step_batch_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
