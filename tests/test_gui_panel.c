/* test_gui_panel.c - the viewer's parameter panel: its text lists every run-time parameter with
 * its value, clicks on the drawn [-] and [+] hit those buttons, and a nudge changes exactly one
 * parameter through the scenario's checks (refused at a bound). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "render_font.h"
#include "render_gui_hud.h"
#include "render_gui_panel.h"
#include "sim_events.h"

/* Line k (0 = title) of text into out. */
static void line_of(const char *text, int k, char *out, size_t n)
{
    const char *p = text;
    for (int i = 0; i < k && p; i++) {
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    assert_non_null(p);
    size_t len = strcspn(p, "\n");
    assert_true(len < n);
    memcpy(out, p, len);
    out[len] = '\0';
}

static void test_text_lists_every_parameter(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.noise = 0.25;
    render_gui_panel p = {1, 2};
    char text[2048], line[256];
    render_gui_panel_text(&p, &sc, text, sizeof text);
    assert_int_equal(render_gui_panel_rows(), sim_events_param_count());
    for (int i = 0; i < render_gui_panel_rows(); i++) {
        line_of(text, i + 1, line, sizeof line);
        assert_non_null(strstr(line, sim_events_param_name(i)));
        assert_int_equal(line[0] == '>', i == 2);
        assert_non_null(strstr(line, "[-]"));
        assert_non_null(strstr(line, "[+]"));
    }
    line_of(text, 1, line, sizeof line);
    assert_non_null(strstr(line, "0.25"));
}

/* A click in the middle of the characters of "[-]" / "[+]" as drawn hits that button. */
static void test_hit_matches_the_drawn_buttons(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    render_gui_panel p = {1, 0};
    char text[2048], line[256];
    render_gui_panel_text(&p, &sc, text, sizeof text);
    for (int scale = 1; scale <= 2; scale++) {
        for (int i = 0; i < render_gui_panel_rows(); i++) {
            line_of(text, i + 1, line, sizeof line);
            int minus = (int)(strstr(line, "[-]") - line), plus = (int)(strstr(line, "[+]") - line);
            int y = ((i + 1) * RENDER_LINE + 3) * scale;
            int row = -1, dir = 7;
            assert_int_equal(render_gui_panel_hit((minus + 1) * RENDER_ADVANCE * scale + scale,
                                                  y, scale, &row, &dir), 1);
            assert_int_equal(row, i);
            assert_int_equal(dir, -1);
            assert_int_equal(render_gui_panel_hit((plus + 1) * RENDER_ADVANCE * scale + scale, y,
                                                  scale, &row, &dir), 1);
            assert_int_equal(dir, 1);
            assert_int_equal(render_gui_panel_hit(4 * RENDER_ADVANCE * scale, y, scale, &row,
                                                  &dir), 1);
            assert_int_equal(dir, 0);
        }
        int row, dir;
        /* The title line and below the last row are not rows. */
        assert_int_equal(render_gui_panel_hit(10, 2 * scale, scale, &row, &dir), 0);
        assert_int_equal(render_gui_panel_hit(10, (render_gui_panel_rows() + 1) * RENDER_LINE *
                                                      scale + 1, scale, &row, &dir), 0);
    }
}

static void test_nudge_changes_one_parameter(void **state)
{
    (void)state;
    for (int i = 0; i < render_gui_panel_rows(); i++) {
        sim_scenario sc, before;
        sim_scenario_defaults(&sc);
        before = sc;
        sim_err err;
        int dir = sim_events_param_get(&sc, i) > 0 ? -1 : 1;
        assert_int_equal(render_gui_panel_nudge(&sc, i, dir, &err), SIM_OK);
        for (int k = 0; k < render_gui_panel_rows(); k++) {
            int changed = sim_events_param_get(&sc, k) != sim_events_param_get(&before, k);
            assert_int_equal(changed, k == i);
        }
    }
}

static void test_nudge_refused_at_a_bound(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    int noise = sim_events_param_find("agents.noise");
    assert_true(noise >= 0);
    sc.noise = 1.0;
    sim_err err;
    assert_int_equal(render_gui_panel_nudge(&sc, noise, 1, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "agents.noise"));
    assert_true(sc.noise == 1.0);
    assert_int_equal(render_gui_panel_nudge(&sc, noise, -1, &err), SIM_OK);
    assert_true(sc.noise < 1.0);
    assert_int_equal(render_gui_panel_nudge(&sc, 99, 1, &err), SIM_EINVAL);
}

/* Slow runs show seconds per step. */
static void test_rate_text(void **state)
{
    (void)state;
    char buf[64];
    render_gui_hud_rate(buf, sizeof buf, 0.2);
    assert_string_equal(buf, "5.0 s/step");
    render_gui_hud_rate(buf, sizeof buf, 12.5);
    assert_string_equal(buf, "12.5 steps/s");
    render_gui_hud_rate(buf, sizeof buf, 0.0);
    assert_string_equal(buf, "0.0 steps/s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_lists_every_parameter),
        cmocka_unit_test(test_hit_matches_the_drawn_buttons),
        cmocka_unit_test(test_nudge_changes_one_parameter),
        cmocka_unit_test(test_nudge_refused_at_a_bound),
        cmocka_unit_test(test_rate_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
