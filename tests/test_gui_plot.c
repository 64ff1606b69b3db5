/* test_gui_plot.c - the live plot: the history ring, y-range padding and its corner cases,
 * value -> row mapping, and that drawing puts the series where the scaling says. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render_gui_plot.h"

static void test_range(void **state)
{
    (void)state;
    double lo, hi;
    const double a[] = {1.0, 3.0, 2.0};
    render_gui_plot_range(a, 3, &lo, &hi);
    assert_true(fabs(lo - 0.9) < 1e-12 && fabs(hi - 3.1) < 1e-12); /* 5% of the span */
    const double flat[] = {10.0, 10.0};
    render_gui_plot_range(flat, 2, &lo, &hi);
    assert_true(fabs(lo - 9.5) < 1e-12 && fabs(hi - 10.5) < 1e-12);
    const double zero[] = {0.0};
    render_gui_plot_range(zero, 1, &lo, &hi);
    assert_true(lo < 0.0 && hi > 0.0 && hi - lo < 1e-5);
    const double odd[] = {NAN, INFINITY, -2.0, NAN, 2.0, -INFINITY};
    render_gui_plot_range(odd, 6, &lo, &hi);
    assert_true(fabs(lo + 2.2) < 1e-12 && fabs(hi - 2.2) < 1e-12);
    const double none[] = {NAN};
    render_gui_plot_range(none, 1, &lo, &hi);
    assert_true(lo == 0.0 && hi == 1.0);
    render_gui_plot_range(NULL, 0, &lo, &hi);
    assert_true(lo == 0.0 && hi == 1.0);
}

static void test_rows(void **state)
{
    (void)state;
    assert_int_equal(render_gui_plot_row(5.0, 0.0, 5.0, 10, 101), 10);   /* hi: top */
    assert_int_equal(render_gui_plot_row(0.0, 0.0, 5.0, 10, 101), 110);  /* lo: bottom */
    assert_int_equal(render_gui_plot_row(2.5, 0.0, 5.0, 10, 101), 60);   /* middle */
    assert_int_equal(render_gui_plot_row(99.0, 0.0, 5.0, 10, 101), 10);  /* clamped */
    assert_int_equal(render_gui_plot_row(-9.0, 0.0, 5.0, 10, 101), 110);
    assert_int_equal(render_gui_plot_row(NAN, 0.0, 5.0, 10, 101), 10);
    assert_int_equal(render_gui_plot_row(1.0, 1.0, 1.0, 3, 50), 3);      /* degenerate range */
    /* monotone: larger values never sit lower */
    for (int i = 0; i < 100; i++)
        assert_true(render_gui_plot_row(i * 0.05, 0.0, 5.0, 0, 37) >=
                    render_gui_plot_row((i + 1) * 0.05, 0.0, 5.0, 0, 37));
}

static void test_ring(void **state)
{
    (void)state;
    render_gui_plot *p = calloc(1, sizeof *p);
    render_gui_plot_clear(p);
    sim_stats st;
    memset(&st, 0, sizeof st);
    st.agents = 200;
    for (int k = 1; k <= RENDER_GUI_PLOT_CAP + 10; k++) {
        st.step = k;
        st.moved = k % 200;
        st.field_mean = k;
        st.field_max = (float)(2 * k);
        st.residual = 0.5f;
        render_gui_plot_push(p, &st);
    }
    assert_int_equal(p->n, RENDER_GUI_PLOT_CAP);
    /* the oldest 10 were dropped */
    assert_true(render_gui_plot_at(p, RENDER_GUI_STAT_MEAN, 0) == 11.0);
    assert_true(render_gui_plot_at(p, RENDER_GUI_STAT_MAX, p->n - 1) ==
                2.0 * (RENDER_GUI_PLOT_CAP + 10));
    assert_true(render_gui_plot_at(p, RENDER_GUI_STAT_MOVED, 0) == (11 % 200) / 200.0);
    assert_true(render_gui_plot_at(p, RENDER_GUI_STAT_RESIDUAL, 5) == 0.5);
    assert_string_equal(render_gui_stat_name(RENDER_GUI_STAT_MOVED), "moved fraction");
    free(p);
}

/* A rising series: the drawn line starts low on the left and ends high on the right. */
static void test_draw(void **state)
{
    (void)state;
    render_gui_plot *p = calloc(1, sizeof *p);
    sim_stats st;
    memset(&st, 0, sizeof st);
    for (int mode = 0; mode < 2; mode++) {
        render_gui_plot_clear(p);
        int n = mode == 0 ? 50 : 3000; /* fewer and more samples than columns */
        for (int k = 0; k < n; k++) {
            st.step = k + 1;
            st.field_mean = k;
            render_gui_plot_push(p, &st);
        }
        enum { W = 300, H = 120 };
        uint8_t *px = calloc(W * H, 4);
        render_canvas c = {px, W, H};
        render_gui_plot_draw(p, RENDER_GUI_STAT_MEAN, &c, 1);
        /* the series colour: (255, 200, 60) */
        int first_x = -1, first_y = -1, last_x = -1, last_y = -1;
        for (int x = 0; x < W; x++)
            for (int y = 0; y < H; y++) {
                const uint8_t *q = px + ((size_t)y * W + x) * 4;
                if (q[0] == 255 && q[1] == 200 && q[2] == 60) {
                    if (first_x < 0) {
                        first_x = x;
                        first_y = y;
                    }
                    last_x = x;
                    last_y = y;
                }
            }
        assert_true(first_x >= 0);
        assert_true(last_x - first_x > W / 2); /* spans most of the width */
        assert_true(first_y > last_y + H / 2); /* low on the left, high on the right */
        free(px);
    }
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_ring),
        cmocka_unit_test(test_draw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
