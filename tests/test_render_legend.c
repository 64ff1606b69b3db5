/* test_render_legend.c - the colour bar: its pixels are the LUT entries by the documented rule,
 * the label and the numbers are the font's text at their documented places and ink only inside
 * the panel, a stamp writes only its bottom-right rectangle (alpha kept 255) and nothing at all in
 * a frame too small for it, and the label words fixed and automatic ranges as promised. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render_colormap.h"
#include "render_font.h"
#include "render_legend.h"
#include "sim_scenario.h"

#define LABEL_GAP 3 /* render_legend.h's layout: rows between label and bar, bar and numbers */
#define NUM_GAP 3

static const uint8_t sentinel[4] = {1, 2, 3, 4};

/* A LUT whose 256 entries all differ (and whose alpha is not 255, which the bar must ignore). */
static void distinct_lut(uint8_t lut[256 * 4])
{
    for (int i = 0; i < 256; i++) {
        lut[4 * i + 0] = (uint8_t)i;
        lut[4 * i + 1] = (uint8_t)(255 - i);
        lut[4 * i + 2] = (uint8_t)(i * 7 + 3);
        lut[4 * i + 3] = (uint8_t)(i & 0x7f);
    }
}

static uint8_t *new_image(int w, int h, const uint8_t fill[4])
{
    uint8_t *px = malloc((size_t)w * (size_t)h * 4);
    assert_non_null(px);
    for (int i = 0; i < w * h; i++)
        memcpy(px + 4 * i, fill, 4);
    return px;
}

static const uint8_t *at(const uint8_t *px, int w, int x, int y)
{
    return px + ((size_t)y * (size_t)w + (size_t)x) * 4;
}

/* The geometry render_legend.h documents, for a legend of size lw x lh at (x, y). */
typedef struct layout {
    int pad, bx, by, bw, bh, ny;
} layout;

static layout layout_of(int x, int y, int lw, int scale)
{
    layout L;
    L.pad = RENDER_LEGEND_PAD * scale;
    L.bx = x + L.pad;
    L.bw = lw - 2 * L.pad;
    L.by = y + L.pad + (RENDER_CELL_H + LABEL_GAP) * scale;
    L.bh = RENDER_LEGEND_BAR_H * scale;
    L.ny = L.by + L.bh + NUM_GAP * scale;
    return L;
}

/* Every bar pixel is entry floor(i * 256 / bw) of lut, RGB as in the table and alpha 255. */
static void check_bar(const uint8_t *px, int w, const layout *L, const uint8_t *lut)
{
    for (int yy = L->by; yy < L->by + L->bh; yy++)
        for (int i = 0; i < L->bw; i++) {
            const uint8_t *p = at(px, w, L->bx + i, yy);
            const uint8_t *e = lut + 4 * (i * 256 / L->bw);
            if (p[0] != e[0] || p[1] != e[1] || p[2] != e[2] || p[3] != 255)
                fail_msg("bar pixel %d (row %d, width %d): %u,%u,%u,%u, want entry %d", i, yy,
                         L->bw, p[0], p[1], p[2], p[3], i * 256 / L->bw);
        }
    /* the left end is entry 0; the right end is 255 only for bars of 256 pixels or more (the
     * rule samples entries, it does not stretch them), and never more than one entry short */
    assert_memory_equal(at(px, w, L->bx, L->by), lut, 3);
    int last = (L->bw - 1) * 256 / L->bw;
    assert_true(last == 255 || (L->bw < 256 && last == 254));
}

static void test_label_wording(void **state)
{
    (void)state;
    char b[96];
    render_legend_label(b, sizeof b, "field", 0.0f, 0);
    assert_string_equal(b, "field  auto: frame max");
    render_legend_label(b, sizeof b, "field", 5.0f, 0);
    assert_string_equal(b, "field  fixed: output.range_max");
    render_legend_label(b, sizeof b, "field", 5.0f, 1); /* a fixed range wins in the viewer too */
    assert_string_equal(b, "field  fixed: output.range_max");
    render_legend_label(b, sizeof b, "field", 0.0f, 1);
    assert_string_equal(b, "field  auto: range in view");
    render_legend_label(b, sizeof b, "horizon sums r=8", 0.0f, 1);
    assert_string_equal(b, "horizon sums r=8  auto: range in view");
    /* a negative range_max is automatic too (the scenario refuses it, a view may hold it) */
    render_legend_label(b, sizeof b, "field", -1.0f, 0);
    assert_string_equal(b, "field  auto: frame max");
    /* a short buffer is cut and terminated; n = 0 writes nothing */
    char s[6];
    memset(s, 'x', sizeof s);
    render_legend_label(s, sizeof s, "field", 5.0f, 0);
    assert_string_equal(s, "field");
    render_legend_label(s, 0, "other", 5.0f, 0);
    assert_string_equal(s, "field");
}

/* The horizon layer's wording: agents.radius for a plain scenario; the first species' radius
 * (and, for an agent's sums, its name and "scores") for a named model. */
static void test_horizon_what(void **state)
{
    (void)state;
    sim_scenario sc;
    sim_err err = {{0}};
    sim_scenario_defaults(&sc);
    sc.radius = 5;
    char b[64];
    render_horizon_what(b, sizeof b, &sc, 0);
    assert_string_equal(b, "horizon sums r=5");
    render_horizon_what(b, sizeof b, &sc, 1);
    assert_string_equal(b, "horizon sums r=5");
    sim_scenario_defaults(&sc);
    static const char text[] = "[field.grass]\n"
                               "[species.sheep]\ncount = 10\nradius = 3\nsense = grass:1\n"
                               "[species.wolf]\ncount = 2\nradius = 11\nsense = grass:1\n";
    assert_int_equal(sim_scenario_parse_string(&sc, text, "named.ini", &err), SIM_OK);
    render_horizon_what(b, sizeof b, &sc, 0);
    assert_string_equal(b, "horizon sums r=3");
    render_horizon_what(b, sizeof b, &sc, 1);
    assert_string_equal(b, "sheep scores r=3");
    render_horizon_what(b, 6, &sc, 1); /* shortened, terminated */
    assert_string_equal(b, "sheep");
}

static void test_size(void **state)
{
    (void)state;
    int w, h;
    const int h1 = (2 * RENDER_LEGEND_PAD + 2 * RENDER_CELL_H + LABEL_GAP + NUM_GAP +
                    RENDER_LEGEND_BAR_H);
    /* a short label: the bar's minimum width decides */
    render_legend_size("field  auto: frame max", 1, &w, &h);
    assert_int_equal(w, RENDER_LEGEND_BAR_MIN_W + 2 * RENDER_LEGEND_PAD);
    assert_int_equal(h, h1);
    render_legend_size("field  auto: frame max", 2, &w, &h);
    assert_int_equal(w, 2 * (RENDER_LEGEND_BAR_MIN_W + 2 * RENDER_LEGEND_PAD));
    assert_int_equal(h, 2 * h1);
    render_legend_size("field  auto: frame max", 0, &w, &h); /* below 1 counts as 1 */
    assert_int_equal(h, h1);
    /* a long label widens the panel (and the bar) */
    const char *lab = "horizon sums r=64  auto: range in view";
    render_legend_size(lab, 1, &w, &h);
    assert_int_equal(w, render_text_width(lab, 1) + 2 * RENDER_LEGEND_PAD);
    assert_true(render_text_width(lab, 1) > RENDER_LEGEND_BAR_MIN_W);
    /* two of the longest numbers fit side by side, a blank apart */
    assert_true(2 * (RENDER_LEGEND_NUM_CHARS * RENDER_ADVANCE - 1) + RENDER_ADVANCE <=
                RENDER_LEGEND_BAR_MIN_W);
    char num[32];
    assert_int_equal(snprintf(num, sizeof num, "%.4g", -1.23456e-308), RENDER_LEGEND_NUM_CHARS);
}

/* The bar at both scales and at widths that are and are not a divisor of 256. */
static void test_bar_pixels(void **state)
{
    (void)state;
    uint8_t lut[256 * 4];
    distinct_lut(lut);
    const char *labels[] = {"field  auto: frame max", "horizon sums r=64  auto: range in view",
                            "field  fixed: output.range_max"};
    for (int li = 0; li < 3; li++)
        for (int scale = 1; scale <= 3; scale++) {
            int lw, lh;
            render_legend_size(labels[li], scale, &lw, &lh);
            uint8_t *px = new_image(lw, lh, sentinel);
            render_canvas c = {px, lw, lh};
            render_legend_draw(&c, 0, 0, lut, 0.0, 1.0, labels[li], scale);
            layout L = layout_of(0, 0, lw, scale);
            check_bar(px, lw, &L, lut);
            free(px);
        }
    /* a real colormap: its entries, alpha 255 */
    render_colormap_lut(SIM_CMAP_MAGMA, lut);
    int lw, lh;
    render_legend_size("x", 1, &lw, &lh);
    uint8_t *px = new_image(lw, lh, sentinel);
    render_canvas c = {px, lw, lh};
    render_legend_draw(&c, 0, 0, lut, 0.0, 1.0, "x", 1);
    layout L = layout_of(0, 0, lw, 1);
    check_bar(px, lw, &L, lut);
    free(px);
}

/* Whether a pixel is the legend's ink. */
static int is_ink(const uint8_t *p)
{
    return p[0] == 235 && p[1] == 235 && p[2] == 235 && p[3] == 255;
}

/* Compares the ink of the band [y0, y0+bh) x [x0, x1) of px with `text` drawn at (tx, y0) by the
 * font alone: the same pixels, no more, no fewer. */
static void check_text_band(const uint8_t *px, int w, int x0, int x1, int y0, int bh, int tx,
                            const char *text, int scale)
{
    int bw = x1 - x0;
    uint8_t *ref = new_image(bw, bh, (const uint8_t[4]){0, 0, 0, 255});
    render_canvas rc = {ref, bw, bh};
    render_text_draw(&rc, tx - x0, 0, text, scale, (render_rgba){235, 235, 235, 255});
    int inked = 0;
    for (int y = 0; y < bh; y++)
        for (int x = 0; x < bw; x++) {
            int want = is_ink(at(ref, bw, x, y)), got = is_ink(at(px, w, x0 + x, y0 + y));
            if (want != got)
                fail_msg("'%s' at (%d, %d): ink %d, want %d", text, x0 + x, y0 + y, got, want);
            inked += got;
        }
    assert_true(inked > 0);
    free(ref);
}

/* Drawn into a larger canvas at an offset: nothing changes outside the panel, the label and the
 * numbers are the font's pixels at their places (lo flush left, hi flush right), and where the
 * panel blends over the canvas it is dark. */
static void test_draw_inside_panel(void **state)
{
    (void)state;
    uint8_t lut[256 * 4];
    render_colormap_lut(SIM_CMAP_VIRIDIS, lut);
    const int cw = 420, ch = 200;
    for (int scale = 1; scale <= 2; scale++) {
        const char *label = "field  fixed: output.range_max";
        int lw, lh;
        render_legend_size(label, scale, &lw, &lh);
        const int x = 13, y = 7;
        uint8_t *px = new_image(cw, ch, (const uint8_t[4]){200, 180, 160, 255});
        render_canvas c = {px, cw, ch};
        render_legend_draw(&c, x, y, lut, -2.5, 1234.5678, label, scale);
        for (int yy = 0; yy < ch; yy++)
            for (int xx = 0; xx < cw; xx++) {
                int inside = xx >= x && xx < x + lw && yy >= y && yy < y + lh;
                const uint8_t *p = at(px, cw, xx, yy);
                if (!inside && (p[0] != 200 || p[1] != 180 || p[2] != 160 || p[3] != 255))
                    fail_msg("pixel (%d, %d) outside the legend changed", xx, yy);
                if (inside)
                    assert_int_equal(p[3], 255); /* over an opaque canvas it stays opaque */
            }
        layout L = layout_of(x, y, lw, scale);
        check_bar(px, cw, &L, lut);
        /* the label on its line, over the whole inner width */
        check_text_band(px, cw, L.bx, L.bx + L.bw, y + L.pad, RENDER_CELL_H * scale, L.bx, label,
                        scale);
        /* the numbers: "-2.5" from the bar's left end, "1235" ending at its right end */
        int hi_w = render_text_width("1235", scale);
        check_text_band(px, cw, L.bx, L.bx + L.bw / 2, L.ny, RENDER_CELL_H * scale, L.bx, "-2.5",
                        scale);
        check_text_band(px, cw, L.bx + L.bw / 2, L.bx + L.bw, L.ny, RENDER_CELL_H * scale,
                        L.bx + L.bw - hi_w, "1235", scale);
        /* the panel's padding is the canvas darkened (black at alpha 200 over it) */
        const uint8_t *corner = at(px, cw, x, y);
        assert_true(corner[0] < 60 && corner[1] < 60 && corner[2] < 60);
        free(px);
    }
}

/* Clipping at the canvas edges: partly outside draws the inside part, fully outside nothing. */
static void test_draw_clipped(void **state)
{
    (void)state;
    uint8_t lut[256 * 4];
    distinct_lut(lut);
    uint8_t *px = new_image(50, 30, sentinel);
    render_canvas c = {px, 50, 30};
    render_legend_draw(&c, 200, 5, lut, 0.0, 1.0, "field", 1);
    render_legend_draw(&c, -500, -500, lut, 0.0, 1.0, "field", 1);
    for (int i = 0; i < 50 * 30; i++)
        assert_memory_equal(px + 4 * i, sentinel, 4);
    render_legend_draw(&c, -20, -10, lut, 0.0, 1.0, "field", 1); /* covers the corner */
    assert_memory_not_equal(px, sentinel, 4);
    free(px);
}

/* A stamp writes exactly the rectangle of render_legend_place, in the bottom-right corner with
 * the documented margin and scale, keeps alpha 255, and shows the LUT in its bar. */
static void test_stamp_corner(void **state)
{
    (void)state;
    uint8_t lut[256 * 4];
    render_colormap_lut(SIM_CMAP_INFERNO, lut);
    const char *label = "field  auto: frame max";
    struct {
        int w, h, scale;
    } cases[] = {{512, 512, 1}, {999, 300, 1}, {1000, 800, 2}, {1600, 60, 1}, {2000, 1200, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int w = cases[k].w, h = cases[k].h, scale = cases[k].scale;
        uint8_t *px = malloc((size_t)w * h * 4);
        assert_non_null(px);
        for (int i = 0; i < w * h; i++) { /* an opaque pattern, like a composed frame */
            px[4 * i + 0] = (uint8_t)(i * 13);
            px[4 * i + 1] = (uint8_t)((i >> 3) % 100); /* never the ink or outline grey */
            px[4 * i + 2] = (uint8_t)(200 + i % 50);
            px[4 * i + 3] = 255;
        }
        uint8_t *before = malloc((size_t)w * h * 4);
        assert_non_null(before);
        memcpy(before, px, (size_t)w * h * 4);
        int x, y, lw, lh, sw, sh;
        assert_int_equal(render_legend_place(label, w, h, &x, &y, &lw, &lh), 1);
        render_legend_size(label, scale, &sw, &sh);
        assert_int_equal(lw, sw);
        assert_int_equal(lh, sh);
        assert_int_equal(x + lw, w - RENDER_LEGEND_MARGIN * scale);
        assert_int_equal(y + lh, h - RENDER_LEGEND_MARGIN * scale);
        render_legend_stamp(px, w, h, lut, 0.0, 42.0, label);
        int changed = 0;
        for (int yy = 0; yy < h; yy++)
            for (int xx = 0; xx < w; xx++) {
                const uint8_t *p = at(px, w, xx, yy), *q = at(before, w, xx, yy);
                int inside = xx >= x && xx < x + lw && yy >= y && yy < y + lh;
                if (!inside && memcmp(p, q, 4) != 0)
                    fail_msg("%dx%d: pixel (%d, %d) outside the legend changed", w, h, xx, yy);
                assert_int_equal(p[3], 255);
                changed += memcmp(p, q, 4) != 0;
            }
        /* the panel darkens every pixel of the pattern: the whole rectangle is the legend */
        assert_int_equal(changed, lw * lh);
        layout L = layout_of(x, y, lw, scale);
        check_bar(px, w, &L, lut);
        free(before);
        free(px);
    }
}

/* A frame too small for the legend at scale 1 plus its margins is left untouched. */
static void test_stamp_too_small(void **state)
{
    (void)state;
    uint8_t lut[256 * 4];
    distinct_lut(lut);
    const char *label = "field  fixed: output.range_max";
    int lw, lh;
    render_legend_size(label, 1, &lw, &lh);
    const int m = RENDER_LEGEND_MARGIN;
    struct {
        int w, h, fits;
    } cases[] = {{lw + 2 * m, lh + 2 * m, 1},     {lw + 2 * m - 1, lh + 2 * m, 0},
                 {lw + 2 * m, lh + 2 * m - 1, 0}, {1, 1, 0},
                 {64, 64, 0},                     {2000, lh + 2 * m - 1, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int w = cases[k].w, h = cases[k].h;
        uint8_t *px = new_image(w, h, (const uint8_t[4]){9, 8, 7, 255});
        int x, y, pw, ph;
        assert_int_equal(render_legend_place(label, w, h, &x, &y, &pw, &ph), cases[k].fits);
        render_legend_stamp(px, w, h, lut, 0.0, 1.0, label);
        int changed = 0;
        for (int i = 0; i < w * h; i++)
            changed += memcmp(px + 4 * i, (const uint8_t[4]){9, 8, 7, 255}, 4) != 0;
        if (cases[k].fits) {
            assert_int_equal(x, m);
            assert_int_equal(y, m);
            assert_true(changed > 0);
        } else {
            assert_int_equal(pw, 0);
            assert_int_equal(ph, 0);
            assert_int_equal(changed, 0);
        }
        free(px);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_wording),     cmocka_unit_test(test_size),
        cmocka_unit_test(test_bar_pixels),        cmocka_unit_test(test_draw_inside_panel),
        cmocka_unit_test(test_draw_clipped),      cmocka_unit_test(test_stamp_corner),
        cmocka_unit_test(test_stamp_too_small),
        cmocka_unit_test(test_horizon_what),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
