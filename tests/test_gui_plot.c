/* test_gui_plot.c - the live plot: the history ring, the drawing range and the printed bounds
 * (true data, never the padded range), value -> row mapping, title fitting, one strip per chosen
 * statistic, the step axis, P-key presets, and min..max columns keeping a spike. The drawing
 * tests count pixels of the exact colours the module documents. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render_font.h"
#include "render_gui_plot.h"

static const render_rgba BG = {0, 0, 0, 190}, INK = {240, 240, 240, 255},
                         BOUND = {200, 200, 200, 255}, AXIS = {150, 150, 150, 255};

static render_gui_plot *fresh(void)
{
    render_gui_plot *p = calloc(1, sizeof *p);
    assert_non_null(p);
    render_gui_plot_clear(p);
    return p;
}

/* One step whose statistics are all given (moved fraction = moved / agents). */
static void push(render_gui_plot *p, int64_t step, double mean, float max, float residual,
                 int64_t moved, int64_t agents)
{
    sim_stats st;
    memset(&st, 0, sizeof st);
    st.step = step;
    st.field_mean = mean;
    st.field_max = max;
    st.residual = residual;
    st.moved = moved;
    st.agents = agents;
    render_gui_plot_push(p, &st);
}

typedef struct {
    uint8_t *px;
    render_canvas c;
} canvas;

static canvas canvas_new(int w, int h)
{
    canvas k;
    k.px = calloc((size_t)w * (size_t)h, 4);
    assert_non_null(k.px);
    k.c.px = k.px;
    k.c.w = w;
    k.c.h = h;
    return k;
}

static int is(const canvas *k, int x, int y, render_rgba col)
{
    const uint8_t *q = k->px + ((size_t)y * (size_t)k->c.w + (size_t)x) * 4;
    return q[0] == col.r && q[1] == col.g && q[2] == col.b && q[3] == col.a;
}

static int count(const canvas *k, render_rgba col)
{
    int n = 0;
    for (int y = 0; y < k->c.h; y++)
        for (int x = 0; x < k->c.w; x++)
            n += is(k, x, y, col);
    return n;
}

/* How many pixels `text` inks at `scale`: what a label must account for, exactly. */
static int glyph_pixels(const char *text, int scale)
{
    render_rgba white = {255, 255, 255, 255};
    int w = render_text_width(text, scale) + 2, h = render_text_height(text, scale) + 2;
    canvas k = canvas_new(w, h);
    render_text_draw(&k.c, 1, 1, text, scale, white);
    int n = count(&k, white);
    free(k.px);
    return n;
}

/* Draws p with mask into a canvas of the size render_gui_plot_size suggests (width w if > 0). */
static canvas draw(render_gui_plot *p, unsigned mask, int w, int scale)
{
    int sw, sh;
    render_gui_plot_size(mask, scale, &sw, &sh);
    canvas k = canvas_new(w > 0 ? w : sw, sh);
    render_gui_plot_draw(p, mask, &k.c, scale);
    return k;
}

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

    /* The true bounds: no padding, non-finite skipped, outputs untouched when none is finite. */
    assert_int_equal(render_gui_plot_bounds(odd, 6, &lo, &hi), 2);
    assert_true(lo == -2.0 && hi == 2.0);
    lo = hi = 42.0;
    assert_int_equal(render_gui_plot_bounds(none, 1, &lo, &hi), 0);
    assert_true(lo == 42.0 && hi == 42.0);
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
    render_gui_plot *p = fresh();
    for (int k = 1; k <= RENDER_GUI_PLOT_CAP + 10; k++)
        push(p, k, k, (float)(2 * k), 0.5f, k % 200, 200 + k);
    assert_int_equal(p->n, RENDER_GUI_PLOT_CAP);
    /* the oldest 10 were dropped */
    assert_true(render_gui_plot_step_at(p, 0) == 11);
    assert_true(render_gui_plot_step_at(p, p->n - 1) == RENDER_GUI_PLOT_CAP + 10);
    assert_true(render_gui_plot_at(p, RENDER_GUI_STAT_MEAN, 0) == 11.0);
    assert_true(render_gui_plot_at(p, RENDER_GUI_STAT_MAX, p->n - 1) ==
                2.0 * (RENDER_GUI_PLOT_CAP + 10));
    assert_true(render_gui_plot_at(p, RENDER_GUI_STAT_MOVED, 0) == (11 % 200) / 211.0);
    assert_true(render_gui_plot_at(p, RENDER_GUI_STAT_RESIDUAL, 5) == 0.5);
    assert_true(render_gui_plot_at(p, RENDER_GUI_STAT_AGENTS, 0) == 211.0);
    assert_string_equal(render_gui_stat_name(RENDER_GUI_STAT_MOVED), "moved fraction");
    assert_string_equal(render_gui_stat_name(RENDER_GUI_STAT_AGENTS), "agents");
    /* no agents: a moved fraction of 0, not a division by zero */
    push(p, 1, 0.0, 0.0f, 0.0f, 0, 0);
    assert_true(render_gui_plot_at(p, RENDER_GUI_STAT_MOVED, p->n - 1) == 0.0);
    free(p);
}

/* The complaint: one value 0 at step 0 printed "field max -1.821". The bound printed is "0",
 * once, and the canvas holds exactly the pixels of "0" in the bound colour. */
static void test_bounds_single_zero(void **state)
{
    (void)state;
    render_gui_plot *p = fresh();
    push(p, 0, 0.0, -0.0f, 0.0f, 0, 10); /* a negative zero prints "0" too */
    char hi[32], lo[32];
    for (int stat = 0; stat < RENDER_GUI_STAT_AGENTS; stat++) {
        assert_int_equal(render_gui_plot_bound_labels(p, stat, hi, lo, sizeof hi), 1);
        assert_string_equal(hi, "0");
        assert_string_equal(lo, "");
    }
    for (int stat = 0; stat < RENDER_GUI_STAT_AGENTS; stat++) {
        canvas k = draw(p, 1u << stat, 0, 1);
        assert_int_equal(count(&k, BOUND), glyph_pixels("0", 1));
        free(k.px);
    }
    /* a single negative value prints itself, not a padded neighbour */
    render_gui_plot_clear(p);
    push(p, 3, -1.821, 5.0f, 0.0f, 0, 10);
    assert_int_equal(render_gui_plot_bound_labels(p, RENDER_GUI_STAT_MEAN, hi, lo, sizeof hi), 1);
    assert_string_equal(hi, "-1.821");
    /* no finite sample: no label */
    render_gui_plot_clear(p);
    push(p, 1, NAN, 0.0f, 0.0f, 0, 10);
    assert_int_equal(render_gui_plot_bound_labels(p, RENDER_GUI_STAT_MEAN, hi, lo, sizeof hi), 0);
    assert_string_equal(hi, "");
    free(p);
}

/* A series 1..10 (with non-finite samples among them) prints exactly 10 and 1, at both scales,
 * and the canvas holds exactly those labels' pixels in the bound colour. */
static void test_bounds_series(void **state)
{
    (void)state;
    render_gui_plot *p = fresh();
    for (int k = 1; k <= 10; k++) {
        push(p, k, k, 0.0f, 0.0f, 0, 10);
        if (k == 4)
            push(p, k, INFINITY, 0.0f, 0.0f, 0, 10);
        if (k == 7)
            push(p, k, NAN, 0.0f, 0.0f, 0, 10);
    }
    char hi[32], lo[32];
    assert_int_equal(render_gui_plot_bound_labels(p, RENDER_GUI_STAT_MEAN, hi, lo, sizeof hi), 2);
    assert_string_equal(hi, "10");
    assert_string_equal(lo, "1");
    for (int s = 1; s <= 2; s++) {
        canvas k = draw(p, 1u << RENDER_GUI_STAT_MEAN, 0, s);
        assert_int_equal(count(&k, BOUND), glyph_pixels("10", s) + glyph_pixels("1", s));
        free(k.px);
    }
    /* %.4g of the data, not of a padded range */
    render_gui_plot_clear(p);
    push(p, 1, 0.000123456, 0.0f, 0.0f, 0, 10);
    push(p, 2, 5.5, 0.0f, 0.0f, 0, 10);
    render_gui_plot_bound_labels(p, RENDER_GUI_STAT_MEAN, hi, lo, sizeof hi);
    assert_string_equal(hi, "5.5");
    assert_string_equal(lo, "0.0001235");
    free(p);
}

/* Whether every pixel of the margin inside the frame is still background. */
static int margin_clean(const canvas *k, int pad)
{
    int w = k->c.w, h = k->c.h;
    for (int y = 1; y < h - 1; y++)
        for (int x = 1; x < w - 1; x++) {
            int inside = x >= pad && x < w - pad && y >= pad && y < h - pad;
            if (!inside && !is(k, x, y, BG))
                return 0;
        }
    return 1;
}

/* Long values at every width from 60 to 400: the title is shortened, not cut by the edge, and
 * nothing (title, labels, axis) inks the margin. */
static void test_title_fits(void **state)
{
    (void)state;
    render_gui_plot *p = fresh();
    for (int k = 0; k < 30; k++)
        push(p, 1234560 + k, -1.234567e-05 * (k + 1), 12345.678f + (float)k, 1e-7f * (float)k,
             1 + k, 3);
    char t[96];
    for (int s = 1; s <= 2; s++) {
        for (int w = 60; w <= 400; w++) {
            canvas k = draw(p, RENDER_GUI_PLOT_ALL, w, s);
            if (!margin_clean(&k, 4 * s))
                fail_msg("scale %d width %d: ink in the margin", s, w);
            assert_true(count(&k, INK) > 0); /* some title is there */
            free(k.px);
        }
        for (int max_w = 0; max_w <= 400; max_w++)
            for (int stat = 0; stat < RENDER_GUI_STAT_COUNT; stat++) {
                int got = render_gui_plot_title(p, stat, max_w, s, t, sizeof t);
                assert_int_equal(got, render_text_width(t, s));
                assert_true(got <= max_w);
            }
    }
    /* the shortening steps, in order */
    render_gui_plot_title(p, RENDER_GUI_STAT_MEAN, 400, 1, t, sizeof t);
    assert_string_equal(t, "field mean -0.0003704");
    render_gui_plot_title(p, RENDER_GUI_STAT_MEAN, render_text_width("field mean -0.00037", 1),
                          1, t, sizeof t);
    assert_string_equal(t, "field mean -0.00037");
    render_gui_plot_title(p, RENDER_GUI_STAT_MEAN, render_text_width("mean -0.0003704", 1), 1,
                          t, sizeof t);
    assert_string_equal(t, "mean -0.0003704");
    render_gui_plot_title(p, RENDER_GUI_STAT_MEAN, render_text_width("mean -0.0..", 1), 1, t,
                          sizeof t);
    assert_string_equal(t, "mean -0.0..");
    render_gui_plot_title(p, RENDER_GUI_STAT_MEAN, render_text_width("mean..", 1), 1, t,
                          sizeof t);
    assert_string_equal(t, "mean..");
    render_gui_plot_title(p, RENDER_GUI_STAT_MEAN, 5, 1, t, sizeof t);
    assert_string_equal(t, "");
    free(p);
}

/* Each statistic in the mask gets a strip in its colour, top to bottom in stat order, spanning
 * the shared plot width; statistics not in the mask draw nothing. */
static void test_strips(void **state)
{
    (void)state;
    render_gui_plot *p = fresh();
    for (int k = 0; k < 100; k++)
        push(p, k, sin(k * 0.1), (float)k, (float)(100 - k), k % 7, 50 + k / 10);
    const unsigned masks[] = {RENDER_GUI_PLOT_ALL, (1u << RENDER_GUI_STAT_MEAN) |
                                  (1u << RENDER_GUI_STAT_RESIDUAL),
                              1u << RENDER_GUI_STAT_AGENTS, 0x1fu};
    for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; mi++) {
        unsigned mask = masks[mi];
        canvas k = draw(p, mask, 0, 1);
        int strips = 0;
        double prev_y = -1.0;
        int first_x[RENDER_GUI_STAT_COUNT], last_x[RENDER_GUI_STAT_COUNT];
        for (int stat = 0; stat < RENDER_GUI_STAT_COUNT; stat++) {
            render_rgba col = render_gui_stat_colour(stat);
            long n = 0, ysum = 0;
            first_x[stat] = -1;
            last_x[stat] = -1;
            for (int y = 0; y < k.c.h; y++)
                for (int x = 0; x < k.c.w; x++)
                    if (is(&k, x, y, col)) {
                        n++;
                        ysum += y;
                        if (first_x[stat] < 0 || x < first_x[stat])
                            first_x[stat] = x;
                        if (x > last_x[stat])
                            last_x[stat] = x;
                    }
            if (!(mask & (1u << stat))) {
                assert_int_equal(n, 0);
                continue;
            }
            assert_true(n > 0);
            strips++;
            double mean_y = (double)ysum / (double)n;
            assert_true(mean_y > prev_y); /* below the previous strip */
            prev_y = mean_y;
            assert_true(last_x[stat] - first_x[stat] > k.c.w / 2);
        }
        /* one x axis: every strip starts and ends in the same columns */
        for (int a = 0; a < RENDER_GUI_STAT_COUNT; a++)
            for (int b = 0; b < RENDER_GUI_STAT_COUNT; b++)
                if ((mask & (1u << a)) && (mask & (1u << b))) {
                    assert_int_equal(first_x[a], first_x[b]);
                    assert_int_equal(last_x[a], last_x[b]);
                }
        int want = 0;
        for (int stat = 0; stat < RENDER_GUI_STAT_COUNT; stat++)
            want += (mask >> stat) & 1u;
        assert_int_equal(strips, want);
        free(k.px);
    }
    /* distinct colours, none of them a text grey */
    for (int a = 0; a < RENDER_GUI_STAT_COUNT; a++) {
        render_rgba ca = render_gui_stat_colour(a);
        const render_rgba greys[] = {BG, INK, BOUND, AXIS};
        for (size_t g = 0; g < sizeof greys / sizeof greys[0]; g++)
            assert_false(ca.r == greys[g].r && ca.g == greys[g].g && ca.b == greys[g].b);
        for (int b = a + 1; b < RENDER_GUI_STAT_COUNT; b++) {
            render_rgba cb = render_gui_stat_colour(b);
            assert_false(ca.r == cb.r && ca.g == cb.g && ca.b == cb.b);
        }
    }
    free(p);
}

/* A rising series starts low on the left and ends high on the right, with fewer and with more
 * samples than columns. */
static void test_rising(void **state)
{
    (void)state;
    render_gui_plot *p = fresh();
    render_rgba col = render_gui_stat_colour(RENDER_GUI_STAT_MEAN);
    for (int mode = 0; mode < 2; mode++) {
        render_gui_plot_clear(p);
        int n = mode == 0 ? 50 : 3000;
        for (int k = 0; k < n; k++)
            push(p, k + 1, k, 0.0f, 0.0f, 0, 1);
        canvas k = draw(p, 1u << RENDER_GUI_STAT_MEAN, 300, 1);
        int first_x = -1, first_y = -1, last_x = -1, last_y = -1;
        for (int x = 0; x < k.c.w; x++)
            for (int y = 0; y < k.c.h; y++)
                if (is(&k, x, y, col)) {
                    if (first_x < 0) {
                        first_x = x;
                        first_y = y;
                    }
                    last_x = x;
                    last_y = y;
                }
        assert_true(first_x >= 0);
        assert_true(last_x - first_x > k.c.w / 2); /* spans most of the width */
        assert_true(first_y > last_y + 15);        /* low on the left, high on the right */
        free(k.px);
    }
    free(p);
}

/* More samples than columns (and a wrapped ring): a one-step spike and a one-step dip in a flat
 * series each still reach their extreme row, in one or two columns only. */
static void test_spike(void **state)
{
    (void)state;
    render_gui_plot *p = fresh();
    int n = RENDER_GUI_PLOT_CAP + 500;
    for (int k = 0; k < n; k++) {
        double v = k == n - 1500 ? 100.0 : k == n - 3001 ? -100.0 : 0.0;
        push(p, k, v, 0.0f, 0.0f, 0, 1);
    }
    canvas k = draw(p, 1u << RENDER_GUI_STAT_MEAN, 0, 1);
    assert_true(k.c.w < RENDER_GUI_PLOT_CAP / 4); /* many samples per column */
    render_rgba col = render_gui_stat_colour(RENDER_GUI_STAT_MEAN);
    int ymin = k.c.h, ymax = -1, base = -1;
    for (int y = 0; y < k.c.h; y++)
        for (int x = 0; x < k.c.w; x++)
            if (is(&k, x, y, col)) {
                ymin = y < ymin ? y : ymin;
                ymax = y > ymax ? y : ymax;
            }
    /* the flat part's row: where the first column draws it */
    for (int x = 0; x < k.c.w && base < 0; x++)
        for (int y = 0; y < k.c.h; y++)
            if (is(&k, x, y, col)) {
                base = y;
                break;
            }
    assert_true(base - ymin >= 10 && ymax - base >= 10); /* both extremes well off the base */
    int up = 0, down = 0; /* columns reaching far above / below the base */
    for (int x = 0; x < k.c.w; x++) {
        int u = 0, d = 0;
        for (int y = 0; y < k.c.h; y++)
            if (is(&k, x, y, col)) {
                u |= y <= ymin + 1;
                d |= y >= ymax - 1;
            }
        up += u;
        down += d;
    }
    assert_true(up >= 1 && up <= 2);
    assert_true(down >= 1 && down <= 2);
    free(k.px);
    free(p);
}

/* The step axis prints the first and last step held and "step", exactly those pixels; one
 * sample prints its step once; an empty history prints "no steps yet" and no series. */
static void test_axis_and_empty(void **state)
{
    (void)state;
    render_gui_plot *p = fresh();
    for (int k = 101; k <= 150; k++)
        push(p, k, k, 0.0f, 0.0f, 0, 1);
    canvas k = draw(p, RENDER_GUI_PLOT_ALL, 0, 1);
    assert_int_equal(count(&k, AXIS),
                     glyph_pixels("101", 1) + glyph_pixels("150", 1) + glyph_pixels("step", 1));
    free(k.px);
    /* too narrow for "step": the numbers alone; narrower still: the last step alone */
    k = draw(p, RENDER_GUI_PLOT_ALL, 80, 1);
    assert_int_equal(count(&k, AXIS), glyph_pixels("101", 1) + glyph_pixels("150", 1));
    free(k.px);
    k = draw(p, RENDER_GUI_PLOT_ALL, 60, 1);
    assert_int_equal(count(&k, AXIS), glyph_pixels("150", 1));
    free(k.px);

    render_gui_plot_clear(p);
    push(p, 7, 1.0, 0.0f, 0.0f, 0, 1);
    k = draw(p, 1u << RENDER_GUI_STAT_MEAN, 0, 2);
    assert_int_equal(count(&k, AXIS), glyph_pixels("7", 2));
    free(k.px);

    render_gui_plot_clear(p);
    k = draw(p, RENDER_GUI_PLOT_ALL, 0, 1);
    assert_int_equal(count(&k, INK), glyph_pixels("no steps yet", 1));
    assert_int_equal(count(&k, AXIS) + count(&k, BOUND), 0);
    for (int stat = 0; stat < RENDER_GUI_STAT_COUNT; stat++)
        assert_int_equal(count(&k, render_gui_stat_colour(stat)), 0);
    assert_true(!is(&k, 0, 0, BG) && !is(&k, k.c.w - 1, k.c.h - 1, BG)); /* the frame */
    free(k.px);
    free(p);
}

static void test_masks_and_size(void **state)
{
    (void)state;
    unsigned m = RENDER_GUI_PLOT_ALL;
    const unsigned want[] = {1u << RENDER_GUI_STAT_MOVED, 1u << RENDER_GUI_STAT_MEAN,
                             1u << RENDER_GUI_STAT_MAX, 1u << RENDER_GUI_STAT_RESIDUAL,
                             RENDER_GUI_PLOT_ALL, 1u << RENDER_GUI_STAT_MOVED};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        m = render_gui_plot_next_mask(m);
        assert_int_equal(m, want[i]);
    }
    assert_int_equal(render_gui_plot_next_mask(0), RENDER_GUI_PLOT_ALL);
    assert_int_equal(render_gui_plot_next_mask(1u << RENDER_GUI_STAT_AGENTS), RENDER_GUI_PLOT_ALL);
    assert_int_equal(render_gui_plot_next_mask(0x3u), RENDER_GUI_PLOT_ALL);

    int w, h, h1, h4;
    render_gui_plot_size(RENDER_GUI_PLOT_ALL, 1, &w, &h4);
    render_gui_plot_size(1u << RENDER_GUI_STAT_MAX, 1, &w, &h1);
    assert_int_equal(w, 240);
    assert_int_equal(h4 - h1, 3 * 40); /* 40 per strip */
    render_gui_plot_size(0, 1, &w, &h);
    assert_int_equal(h, h1);
    render_gui_plot_size(RENDER_GUI_PLOT_ALL, 2, &w, &h);
    assert_int_equal(w, 480);
    assert_int_equal(h, 2 * h4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_ring),
        cmocka_unit_test(test_bounds_single_zero),
        cmocka_unit_test(test_bounds_series),
        cmocka_unit_test(test_title_fits),
        cmocka_unit_test(test_strips),
        cmocka_unit_test(test_rising),
        cmocka_unit_test(test_spike),
        cmocka_unit_test(test_axis_and_empty),
        cmocka_unit_test(test_masks_and_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
