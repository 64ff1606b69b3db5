/* test_gui_sim.c - the viewer's simulation thread against a sim stepped directly: published
 * frames hold exactly the state after the steps asked for, the probe reports the agent and its
 * horizon sums, paint strokes and restarts land between steps, the statistics history follows,
 * and a backend with a compose op publishes images of the requested view. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "render_frame.h"
#include "render_gui_sim.h"

enum { FW = 48, FH = 32 };

static void scenario(sim_scenario *sc)
{
    sim_scenario_defaults(sc);
    sc->width = FW;
    sc->height = FH;
    sc->count = 150;
    sc->radius = 2;
    sc->seed = 3;
}

static void settle(render_gui_sim *g)
{
    for (int i = 0; i < 20000 && !render_gui_sim_settled(g); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_true(render_gui_sim_settled(g));
}

/* The published host frame equals the oracle's state. */
static void expect_state(render_gui_sim *g, sim *oracle)
{
    static float field[FW * FH];
    static uint8_t occ[FW * FH];
    uint32_t *agents = malloc((size_t)sim_agent_count(oracle) * sizeof *agents);
    assert_int_equal(sim_read_field(oracle, field), SIM_OK);
    assert_int_equal(sim_read_agents(oracle, agents), SIM_OK);
    render_frame_occupancy(agents, sim_agent_count(oracle), occ, FW * FH);
    const render_gui_frame *f = render_gui_sim_lock(g);
    assert_true(f->serial > 0);
    assert_true(f->host);
    assert_int_equal(f->step, sim_steps_done(oracle));
    assert_int_equal(f->fw, FW);
    assert_int_equal(f->fh, FH);
    assert_memory_equal(f->field, field, sizeof field);
    assert_memory_equal(f->occ, occ, sizeof occ);
    assert_true(f->field_max == render_field_max(field, FW * FH));
    render_gui_sim_unlock(g);
    free(agents);
}

static void test_steps_probe_paint_restart(void **state)
{
    (void)state;
    sim_scenario sc;
    scenario(&sc);
    sim_err err;
    sim *oracle;
    render_gui_sim *g;
    assert_int_equal(sim_create(&sc, sim_cpu_backend(), 1, &oracle, &err), SIM_OK);
    assert_int_equal(render_gui_sim_create(&sc, sim_cpu_backend(), 2, NULL, &g, &err), SIM_OK);
    sim_view v;
    render_view_init(&v, SIM_CMAP_VIRIDIS, 0.0f);
    render_gui_sim_want(g, &v, 0); /* the CPU backend cannot compose: host frames anyway */
    settle(g);
    expect_state(g, oracle);

    render_gui_sim_steps(g, 4);
    render_gui_sim_steps(g, 3);
    settle(g);
    sim_stats st;
    for (int i = 0; i < 7; i++)
        assert_int_equal(sim_step(oracle, 1, &st), SIM_OK);
    expect_state(g, oracle);
    render_gui_sim_info info;
    render_gui_sim_info_get(g, &info);
    assert_int_equal(info.step, 7);
    assert_int_equal(info.agents, 150);
    assert_false(info.failed);
    render_gui_plot *hist = calloc(1, sizeof *hist);
    uint64_t serial = 0;
    assert_true(render_gui_sim_history(g, hist, &serial));
    assert_false(render_gui_sim_history(g, hist, &serial)); /* unchanged since */
    assert_int_equal(hist->n, 7);
    assert_int_equal(hist->step[(hist->head + 6) % RENDER_GUI_PLOT_CAP], 7);
    assert_true(render_gui_plot_at(hist, RENDER_GUI_STAT_MAX, 6) == st.field_max);
    assert_true(render_gui_plot_at(hist, RENDER_GUI_STAT_MEAN, 6) == st.field_mean);

    /* Probe an agent's cell: its id and the sums the oracle computes there. */
    uint32_t *agents = malloc(150 * sizeof *agents);
    assert_int_equal(sim_read_agents(oracle, agents), SIM_OK);
    int x = (int)(agents[42] % FW), y = (int)(agents[42] / FW);
    render_gui_sim_probe(g, 1, x, y);
    settle(g);
    render_gui_probe p;
    render_gui_sim_probe_get(g, &p);
    assert_true(p.active && p.valid);
    assert_int_equal(p.x, x);
    assert_int_equal(p.y, y);
    assert_int_equal(p.agent, 42);
    assert_int_equal(p.step, 7);
    int64_t sums[SIM_NCAND];
    assert_int_equal(sim_horizon(oracle, &agents[42], 1, sums), SIM_OK);
    assert_memory_equal(p.sums, sums, sizeof sums);
    float field[FW * FH];
    assert_int_equal(sim_read_field(oracle, field), SIM_OK);
    assert_true(p.value == field[agents[42]]);

    /* Paint while paused: the stroke shows at once and the probe follows. */
    render_gui_sim_paint(g, x, y, 2, 10.0f);
    render_gui_sim_paint(g, 3, 3, 0, -1.5f);
    settle(g);
    assert_int_equal(sim_paint(oracle, x, y, 2, 10.0f), SIM_OK);
    assert_int_equal(sim_paint(oracle, 3, 3, 0, -1.5f), SIM_OK);
    expect_state(g, oracle);
    render_gui_sim_probe_get(g, &p);
    assert_true(p.valid && p.value == field[agents[42]] + 10.0f);

    /* Then a step from the painted state. */
    render_gui_sim_steps(g, 1);
    settle(g);
    assert_int_equal(sim_step(oracle, 1, &st), SIM_OK);
    expect_state(g, oracle);

    /* Restart: step 0 of the same seed; history cleared. */
    render_gui_sim_restart(g, 3);
    settle(g);
    sim_destroy(oracle);
    assert_int_equal(sim_create(&sc, sim_cpu_backend(), 1, &oracle, &err), SIM_OK);
    expect_state(g, oracle);
    render_gui_sim_info_get(g, &info);
    assert_int_equal(info.gen, 1);
    assert_int_equal(info.seed, 3);
    assert_true(render_gui_sim_history(g, hist, &serial));
    assert_int_equal(hist->n, 0);

    /* A new seed gives another world. */
    render_gui_sim_restart(g, 4);
    settle(g);
    sc.seed = 4;
    sim_destroy(oracle);
    assert_int_equal(sim_create(&sc, sim_cpu_backend(), 1, &oracle, &err), SIM_OK);
    expect_state(g, oracle);

    /* A free run advances until paused. */
    render_gui_sim_free_run(g, 1);
    for (int i = 0; i < 10000; i++) {
        render_gui_sim_info_get(g, &info);
        if (info.step >= 5)
            break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    render_gui_sim_pause(g);
    settle(g);
    render_gui_sim_info_get(g, &info);
    assert_true(info.step >= 5);
    render_gui_sim_probe(g, 0, 0, 0);
    settle(g);
    render_gui_sim_probe_get(g, &p);
    assert_false(p.active);

    free(agents);
    free(hist);
    render_gui_sim_destroy(g);
    render_gui_sim_destroy(NULL);
    sim_destroy(oracle);
}

/* The CPU backend with a compose op bolted on: a stand-in for the CUDA device path. */
static int composed;
static int test_compose(void *b, const sim_view *v, uint8_t *rgba, sim_err *err)
{
    static float field[FW * FH];
    static uint32_t agents[FW * FH];
    static uint8_t occ[FW * FH];
    const sim_backend_ops *cpu = sim_cpu_backend();
    if (cpu->read_field(b, field, err) != SIM_OK || cpu->read_agents(b, agents, err) != SIM_OK)
        return SIM_EDEVICE;
    render_frame_occupancy(agents, 150, occ, FW * FH);
    render_frame_compose(v, field, FW, FH, occ, render_field_max(field, FW * FH), rgba);
    composed++;
    return SIM_OK;
}

static void test_compose_path(void **state)
{
    (void)state;
    sim_backend_ops ops = *sim_cpu_backend();
    ops.compose = test_compose;
    sim_scenario sc;
    scenario(&sc);
    sim_err err;
    render_gui_sim *g;
    assert_int_equal(render_gui_sim_create(&sc, &ops, 1, NULL, &g, &err), SIM_OK);
    sim_view v;
    render_view_init(&v, SIM_CMAP_MAGMA, 0.0f);
    render_view_fit(&v, FW, FH, 96, 64);
    render_gui_sim_want(g, &v, 0);
    render_gui_sim_steps(g, 2);
    settle(g);
    const render_gui_frame *f = render_gui_sim_lock(g);
    assert_false(f->host);
    assert_int_equal(f->step, 2);
    assert_int_equal(f->image_view.w, 96);
    assert_int_equal(f->image_view.h, 64);
    assert_non_null(f->image);
    uint8_t first[4];
    memcpy(first, f->image, 4);
    render_gui_sim_unlock(g);

    /* A new view is composed without a step; asking for host frames switches kinds. */
    int before = composed;
    v.scale *= 0.5;
    render_gui_sim_want(g, &v, 0);
    settle(g);
    f = render_gui_sim_lock(g);
    assert_true(f->image_view.scale == v.scale);
    render_gui_sim_unlock(g);
    assert_int_equal(composed, before + 1);
    render_gui_sim_want(g, &v, RENDER_GUI_AGENTS_MOVED); /* host frames */
    settle(g);
    f = render_gui_sim_lock(g);
    assert_true(f->host);
    assert_int_equal(f->step, 2);
    render_gui_sim_unlock(g);
    render_gui_sim_destroy(g);
}

static void test_create_fails(void **state)
{
    (void)state;
    sim_scenario sc;
    scenario(&sc);
    sc.count = (int64_t)FW * FH + 1; /* more agents than cells */
    sim_err err;
    render_gui_sim *g = (render_gui_sim *)&err;
    assert_int_not_equal(render_gui_sim_create(&sc, sim_cpu_backend(), 1, NULL, &g, &err), SIM_OK);
    assert_null(g);
    assert_true(err.msg[0] != '\0');
}

/* A step that takes 300 ms: the CPU backend's, after a sleep. */
static int slow_step(void *b, int64_t step, int want_stats, sim_stats *st, sim_err *err)
{
    struct timespec ts = {0, 300000000};
    nanosleep(&ts, NULL);
    return sim_cpu_backend()->step(b, step, want_stats, st, err);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Selecting the agent on a clicked cell never waits for the simulation: asked while a slow step
 * runs, the call returns at once and the thread selects the agent standing there (the one the
 * oracle has there after the step) once it has read the cell. An empty cell selects nobody. */
static void test_select_at_does_not_wait(void **state)
{
    (void)state;
    sim_backend_ops ops = *sim_cpu_backend();
    ops.step = slow_step;
    sim_scenario sc;
    scenario(&sc);
    sim_err err;
    render_gui_sim *g;
    sim *oracle;
    assert_int_equal(render_gui_sim_create(&sc, &ops, 1, NULL, &g, &err), SIM_OK);
    assert_int_equal(sim_create(&sc, sim_cpu_backend(), 1, &oracle, &err), SIM_OK);
    sim_view v;
    render_view_init(&v, SIM_CMAP_VIRIDIS, 0.0f);
    render_view_fit(&v, FW, FH, 96, 64);
    render_gui_sim_want(g, &v, 0);
    settle(g);
    sim_stats st;
    assert_int_equal(sim_step(oracle, 1, &st), SIM_OK);
    uint32_t agents[150];
    assert_int_equal(sim_read_agents(oracle, agents), SIM_OK);
    int x = (int)(agents[17] % FW), y = (int)(agents[17] / FW);

    render_gui_sim_steps(g, 1);
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL); /* the step is under way */
    double t0 = now_s();
    render_gui_sim_select_at(g, x, y);
    assert_true(now_s() - t0 < 0.05);
    render_gui_sim_info info;
    render_gui_sim_info_get(g, &info);
    assert_int_equal(info.selected, -1); /* not yet: the cell is read after the step */
    settle(g);
    render_gui_sim_info_get(g, &info);
    assert_int_equal(info.step, 1);
    assert_int_equal(info.selected, 17);
    assert_int_equal(info.selected_x, x);
    assert_int_equal(info.selected_y, y);

    /* An empty cell: nobody. */
    static uint8_t occ[FW * FH];
    render_frame_occupancy(agents, 150, occ, FW * FH);
    int empty = 0;
    while (occ[empty])
        empty++;
    render_gui_sim_select_at(g, empty % FW, empty / FW);
    settle(g);
    render_gui_sim_info_get(g, &info);
    assert_int_equal(info.selected, -1);
    render_gui_sim_destroy(g);
    sim_destroy(oracle);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_probe_paint_restart),
        cmocka_unit_test(test_compose_path),
        cmocka_unit_test(test_create_fails),
        cmocka_unit_test(test_select_at_does_not_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
