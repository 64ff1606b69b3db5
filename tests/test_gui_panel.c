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
#include "hz_test_util.h"
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
    assert_int_equal(render_gui_panel_rows(&sc), sim_events_param_count(&sc));
    for (int i = 0; i < render_gui_panel_rows(&sc); i++) {
        char name[SIM_EVENTS_KEY_MAX];
        line_of(text, i + 1, line, sizeof line);
        sim_events_param_name(&sc, i, name, sizeof name);
        assert_non_null(strstr(line, name));
        assert_int_equal(line[0] == '>', i == 2);
        assert_non_null(strstr(line, "[-]"));
        assert_non_null(strstr(line, "[+]"));
    }
    line_of(text, 1, line, sizeof line);
    assert_non_null(strstr(line, "0.25"));
}

/* A plain scenario's panel keeps its layout: a 16-character name column. */
static void test_plain_layout(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.noise = 0.25;
    render_gui_panel p = {1, 2};
    char text[RENDER_GUI_PANEL_TEXT_MAX], line[256];
    render_gui_panel_text(&p, &sc, text, sizeof text);
    line_of(text, 1, line, sizeof line);
    assert_string_equal(line, "  agents.noise           0.25  [-] [+]");
    line_of(text, 3, line, sizeof line);
    assert_string_equal(line, "> agents.radius             8  [-] [+]");
    line_of(text, 7, line, sizeof line);
    assert_string_equal(line, "Up/Down pick  ,/. change");
}

/* Four species and four fields, one of each with the longest name a section may have: 20 rows,
 * the longest name 39 characters. */
static const char widest[] =
    "[world]\nwidth = 32\nheight = 32\n"
    "[field.abcdefghijklmnopqrstuvw]\n[field.b]\n[field.c]\n[field.d]\ndecay = 0\n"
    "[species.wolves]\ncount = 5\nsense = b:1\n[species.abcdefghijklmnopqrstuvw]\ncount = 5\n"
    "sense = b:1\n[species.s3]\ncount = 5\nsense = b:1\n[species.s4]\ncount = 5\n"
    "sense = b:1\n";

static void named_scenario(sim_scenario *sc)
{
    sim_err err;
    sim_scenario_defaults(sc);
    if (sim_scenario_parse_string(sc, widest, "widest.ini", &err) != SIM_OK)
        fail_msg("scenario: %s", err.msg);
}

/* A named model's panel lists its named keys with their values, whole: the name column widens
 * to the longest name and the buttons stay in one column. */
static void test_named_rows_and_text(void **state)
{
    (void)state;
    sim_scenario sc;
    named_scenario(&sc);
    sc.species[0].noise = 0.45;
    sc.fields[0].sweeps = 7;
    render_gui_panel p = {1, 1};
    char text[RENDER_GUI_PANEL_TEXT_MAX], line[256];
    render_gui_panel_text(&p, &sc, text, sizeof text);
    assert_int_equal(render_gui_panel_rows(&sc), 20);
    int col = -1;
    for (int i = 0; i < 20; i++) {
        char name[SIM_EVENTS_KEY_MAX];
        line_of(text, i + 1, line, sizeof line);
        sim_events_param_name(&sc, i, name, sizeof name);
        assert_int_equal(strncmp(line + 2, name, strlen(name)), 0);
        assert_int_equal(line[2 + strlen(name)], ' ');
        assert_int_equal(line[0] == '>', i == 1);
        int minus = (int)(strstr(line, "[-]") - line);
        assert_true(col < 0 || minus == col);
        col = minus;
    }
    assert_int_equal(col, 2 + 39 + 1 + 10 + 2);
    line_of(text, 1, line, sizeof line);
    hz_assert_contains(line, "species.wolves.noise");
    hz_assert_contains(line, " 0.45  [-]");
    line_of(text, 10, line, sizeof line);
    hz_assert_contains(line, "field.abcdefghijklmnopqrstuvw.sweeps");
    hz_assert_contains(line, " 7  [-]");
    line_of(text, 21, line, sizeof line);
    assert_string_equal(line, "Up/Down pick  ,/. change"); /* nothing cut short */
}

/* A click in the middle of the characters of "[-]" / "[+]" as drawn on sc's panel hits that
 * button; the name and value columns hit the row only. */
static void assert_hits_match_text(const sim_scenario *sc)
{
    render_gui_panel p = {1, 0};
    char text[RENDER_GUI_PANEL_TEXT_MAX], line[256];
    render_gui_panel_text(&p, sc, text, sizeof text);
    for (int scale = 1; scale <= 2; scale++) {
        for (int i = 0; i < render_gui_panel_rows(sc); i++) {
            line_of(text, i + 1, line, sizeof line);
            int minus = (int)(strstr(line, "[-]") - line), plus = (int)(strstr(line, "[+]") - line);
            int y = ((i + 1) * RENDER_LINE + 3) * scale;
            int row = -1, dir = 7;
            assert_int_equal(render_gui_panel_hit(sc, (minus + 1) * RENDER_ADVANCE * scale + scale,
                                                  y, scale, &row, &dir), 1);
            assert_int_equal(row, i);
            assert_int_equal(dir, -1);
            assert_int_equal(render_gui_panel_hit(sc, (plus + 1) * RENDER_ADVANCE * scale + scale,
                                                  y, scale, &row, &dir), 1);
            assert_int_equal(dir, 1);
            /* the characters just outside the buttons, and the name and the value */
            for (int c = 0; c < (int)strlen(line); c++) {
                if ((c >= minus && c < minus + 3) || (c >= plus && c < plus + 3))
                    continue;
                assert_int_equal(render_gui_panel_hit(sc, c * RENDER_ADVANCE * scale + scale, y,
                                                      scale, &row, &dir), 1);
                assert_int_equal(dir, 0);
            }
        }
        int row, dir;
        /* The title line and below the last row are not rows. */
        assert_int_equal(render_gui_panel_hit(sc, 10, 2 * scale, scale, &row, &dir), 0);
        assert_int_equal(render_gui_panel_hit(sc, 10, (render_gui_panel_rows(sc) + 1) *
                                                          RENDER_LINE * scale + 1, scale, &row,
                                              &dir), 0);
    }
}

static void test_hit_matches_the_drawn_buttons(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    assert_hits_match_text(&sc);
    named_scenario(&sc);
    assert_hits_match_text(&sc);
    /* on the long-named row, where a 16-character column would have put [-] */
    int row, dir;
    int old_minus = 2 + 16 + 1 + 10 + 2;
    assert_int_equal(render_gui_panel_hit(&sc, old_minus * RENDER_ADVANCE + 1,
                                          (9 * RENDER_LINE) + 3, 1, &row, &dir), 1);
    assert_int_equal(row, 8);
    assert_int_equal(dir, 0);
}

/* Each row's nudge changes its parameter and no other, for sc. */
static void assert_nudge_changes_one(const sim_scenario *start)
{
    for (int i = 0; i < render_gui_panel_rows(start); i++) {
        sim_scenario sc = *start, before = *start;
        sim_err err;
        int dir = sim_events_param_get(&sc, i) > 0 ? -1 : 1;
        assert_int_equal(render_gui_panel_nudge(&sc, i, dir, &err), SIM_OK);
        for (int k = 0; k < render_gui_panel_rows(&sc); k++) {
            int changed = sim_events_param_get(&sc, k) != sim_events_param_get(&before, k);
            assert_int_equal(changed, k == i);
        }
    }
}

static void test_nudge_changes_one_parameter(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    assert_nudge_changes_one(&sc);
    named_scenario(&sc);
    assert_nudge_changes_one(&sc);
    /* the named row changes the named section */
    int row = sim_events_param_find(&sc, "species.abcdefghijklmnopqrstuvw.radius");
    assert_int_equal(row, 3);
    sim_err err;
    assert_int_equal(render_gui_panel_nudge(&sc, row, 1, &err), SIM_OK);
    assert_int_equal(sc.species[1].radius, 9);
    assert_int_equal(sc.radius, 8);
}

static void test_nudge_refused_at_a_bound(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    int noise = sim_events_param_find(&sc, "agents.noise");
    assert_true(noise >= 0);
    sc.noise = 1.0;
    sim_err err;
    assert_int_equal(render_gui_panel_nudge(&sc, noise, 1, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "agents.noise"));
    assert_true(sc.noise == 1.0);
    assert_int_equal(render_gui_panel_nudge(&sc, noise, -1, &err), SIM_OK);
    assert_true(sc.noise < 1.0);
    assert_int_equal(render_gui_panel_nudge(&sc, 99, 1, &err), SIM_EINVAL);
    named_scenario(&sc);
    sc.fields[3].decay = 0.0f;
    int decay = sim_events_param_find(&sc, "field.d.decay");
    assert_int_equal(decay, 19);
    assert_int_equal(render_gui_panel_nudge(&sc, decay, -1, &err), SIM_EINVAL);
    assert_string_equal(err.msg, "field.d.decay is at its bound (0)");
    assert_int_equal(render_gui_panel_nudge(&sc, 20, 1, &err), SIM_EINVAL);
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
        cmocka_unit_test(test_plain_layout),
        cmocka_unit_test(test_named_rows_and_text),
        cmocka_unit_test(test_hit_matches_the_drawn_buttons),
        cmocka_unit_test(test_nudge_changes_one_parameter),
        cmocka_unit_test(test_nudge_refused_at_a_bound),
        cmocka_unit_test(test_rate_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
