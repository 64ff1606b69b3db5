/* test_gui_font.c - the built-in font and overlay drawing: every printable glyph is distinct and
 * inked inside its cell, text metrics, drawing stays inside the measured box and clips at the
 * canvas edges, and blending is source-over. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render_font.h"

/* The glyph of ch as a 45-bit mask over its 5 x 9 cell. */
static uint64_t mask(int ch)
{
    uint64_t m = 0;
    for (int row = 0; row < RENDER_CELL_H; row++)
        for (int col = 0; col < RENDER_GLYPH_W; col++)
            if (render_font_pixel(ch, col, row))
                m |= 1ull << (row * RENDER_GLYPH_W + col);
    return m;
}

static void test_glyphs_sane(void **state)
{
    (void)state;
    assert_true(mask(' ') == 0);
    for (int ch = 33; ch <= 126; ch++) {
        uint64_t m = mask(ch);
        assert_true(m != 0); /* every visible character has ink */
        for (int other = 33; other < ch; other++)
            if (mask(other) == m)
                fail_msg("'%c' and '%c' look the same", ch, other);
        /* only letters with tails use the two rows under the baseline */
        int tail = (m >> (RENDER_GLYPH_H * RENDER_GLYPH_W)) != 0;
        int descender = ch == 'g' || ch == 'p' || ch == 'q' || ch == 'y';
        assert_int_equal(tail, descender);
    }
    /* capitals and digits use the full height: top row and bottom (baseline) row inked */
    for (const char *p = "AEHILTZ0123456789"; *p; p++) {
        uint64_t m = mask(*p);
        assert_true((m & 0x1f) != 0);
        assert_true(((m >> (6 * RENDER_GLYPH_W)) & 0x1f) != 0);
    }
    /* outside the cell and outside ASCII */
    assert_false(render_font_pixel('A', -1, 0));
    assert_false(render_font_pixel('A', 5, 0));
    assert_false(render_font_pixel('A', 0, 9));
    assert_true(mask(200) == mask('?'));
    assert_true(mask(7) == mask('?'));
}

static void test_metrics(void **state)
{
    (void)state;
    assert_int_equal(render_text_width("", 1), 0);
    assert_int_equal(render_text_width("a", 1), 5);
    assert_int_equal(render_text_width("abc", 1), 17);
    assert_int_equal(render_text_width("abc", 3), 51);
    assert_int_equal(render_text_width("ab\nlonger\nx", 1), 35);
    assert_int_equal(render_text_height("x", 1), 9);
    assert_int_equal(render_text_height("x\ny", 2), 38);
    assert_int_equal(render_text_height("", 1), 9);
}

/* Bounding box of the pixels whose red channel is 255. */
static void ink_box(const uint8_t *px, int w, int h, int *x0, int *y0, int *x1, int *y1)
{
    *x0 = w;
    *y0 = h;
    *x1 = *y1 = -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (px[((size_t)y * w + x) * 4] == 255) {
                *x0 = x < *x0 ? x : *x0;
                *y0 = y < *y0 ? y : *y0;
                *x1 = x > *x1 ? x : *x1;
                *y1 = y > *y1 ? y : *y1;
            }
}

static void test_draw_inside_box(void **state)
{
    (void)state;
    enum { W = 200, H = 80 };
    uint8_t *px = calloc(W * H, 4);
    render_canvas c = {px, W, H};
    const render_rgba red = {255, 0, 0, 255};
    const char *text = "Hy|\nstep 123 gj";
    render_text_draw(&c, 10, 7, text, 2, red);
    int x0, y0, x1, y1;
    ink_box(px, W, H, &x0, &y0, &x1, &y1);
    assert_true(x0 >= 10 && y0 >= 7);
    assert_true(x1 < 10 + render_text_width(text, 2));
    assert_true(y1 < 7 + render_text_height(text, 2));
    assert_int_equal(y1, 7 + render_text_height(text, 2) - 1); /* the tail of g reaches it */
    /* clipped drawing does not write outside (a canary row after the canvas) */
    uint8_t *big = calloc(W * (H + 1), 4);
    render_canvas small = {big, W, H};
    render_text_draw(&small, -7, H - 5, "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW", 3, red);
    render_text_draw(&small, W - 4, -10, "MMMM", 4, red);
    for (int i = 0; i < W * 4; i++)
        assert_int_equal(big[(size_t)W * H * 4 + i], 0);
    free(big);
    free(px);
}

static void test_blend(void **state)
{
    (void)state;
    uint8_t px[4 * 4];
    render_canvas c = {px, 2, 2};
    render_canvas_clear(&c, (render_rgba){100, 0, 200, 255});
    render_canvas_fill(&c, 1, 0, 5, 5, (render_rgba){200, 255, 0, 0}); /* a = 0: none */
    assert_int_equal(px[4], 100);
    render_canvas_fill(&c, 1, 0, 5, 5, (render_rgba){200, 255, 0, 128});
    assert_int_equal(px[0], 100); /* untouched left column */
    assert_int_equal(px[4], 150); /* (200*128 + 100*127 + 127) / 255 */
    assert_int_equal(px[5], 128);
    assert_int_equal(px[6], 100);
    assert_int_equal(px[7], 255);
    render_canvas_line(&c, -3, -3, 9, 9, (render_rgba){1, 2, 3, 255});
    assert_int_equal(px[0], 1);
    assert_int_equal(px[12], 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glyphs_sane),
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_draw_inside_box),
        cmocka_unit_test(test_blend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
