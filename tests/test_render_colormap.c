/* test_render_colormap.c - the colormap tables: exact endpoints, opaque alpha, distinct maps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render_colormap.h"
#include "sim_scenario.h"

/* Asserts entry i of lut is (r, g, b, 255) within +-1 per channel (the tables are rounded). */
static void assert_entry(const uint8_t *lut, int i, int r, int g, int b)
{
    const uint8_t *e = lut + 4 * i;
    assert_in_range(e[0], r > 0 ? r - 1 : 0, r + 1);
    assert_in_range(e[1], g > 0 ? g - 1 : 0, g + 1);
    assert_in_range(e[2], b > 0 ? b - 1 : 0, b + 1);
    assert_int_equal(e[3], 255);
}

static void test_endpoints(void **state)
{
    (void)state;
    uint8_t lut[256 * 4];
    render_colormap_lut(SIM_CMAP_VIRIDIS, lut);
    assert_entry(lut, 0, 68, 1, 84);
    assert_entry(lut, 255, 253, 231, 37);
    render_colormap_lut(SIM_CMAP_MAGMA, lut);
    assert_entry(lut, 0, 0, 0, 4);
    assert_entry(lut, 255, 252, 253, 191);
    render_colormap_lut(SIM_CMAP_INFERNO, lut);
    assert_entry(lut, 0, 0, 0, 4);
    assert_entry(lut, 255, 252, 255, 164);
    render_colormap_lut(SIM_CMAP_GRAY, lut);
    assert_entry(lut, 0, 0, 0, 0);
    assert_entry(lut, 255, 255, 255, 255);
}

/* Gray is an exact ramp, so its luminance strictly increases. */
static void test_gray_ramp(void **state)
{
    (void)state;
    uint8_t lut[256 * 4];
    render_colormap_lut(SIM_CMAP_GRAY, lut);
    int prev = -1;
    for (int i = 0; i < 256; i++) {
        assert_int_equal(lut[4 * i], i);
        assert_int_equal(lut[4 * i + 1], i);
        assert_int_equal(lut[4 * i + 2], i);
        int luma = 299 * lut[4 * i] + 587 * lut[4 * i + 1] + 114 * lut[4 * i + 2];
        assert_true(luma > prev);
        prev = luma;
    }
}

/* The perceptual maps brighten from end to end: spot-check luminance at quarter points. */
static void test_maps_brighten(void **state)
{
    (void)state;
    for (int c = 0; c < 3; c++) {
        uint8_t lut[256 * 4];
        render_colormap_lut(c, lut);
        int prev = -1;
        for (int i = 0; i < 256; i += 51) {
            int luma = 299 * lut[4 * i] + 587 * lut[4 * i + 1] + 114 * lut[4 * i + 2];
            assert_true(luma > prev);
            prev = luma;
        }
    }
}

static void test_alpha_opaque(void **state)
{
    (void)state;
    for (int c = 0; c < SIM_CMAP_COUNT; c++) {
        uint8_t lut[256 * 4];
        memset(lut, 0, sizeof(lut));
        render_colormap_lut(c, lut);
        for (int i = 0; i < 256; i++)
            assert_int_equal(lut[4 * i + 3], 255);
    }
}

static void test_maps_differ(void **state)
{
    (void)state;
    uint8_t luts[SIM_CMAP_COUNT][256 * 4];
    for (int c = 0; c < SIM_CMAP_COUNT; c++)
        render_colormap_lut(c, luts[c]);
    for (int a = 0; a < SIM_CMAP_COUNT; a++)
        for (int b = a + 1; b < SIM_CMAP_COUNT; b++)
            assert_memory_not_equal(luts[a], luts[b], sizeof(luts[a]));
    /* Neighbouring entries of a listed map differ somewhere: the table is not a short ramp. */
    const uint8_t *v = luts[SIM_CMAP_VIRIDIS];
    int distinct = 0;
    for (int i = 1; i < 256; i++)
        distinct += memcmp(v + 4 * i, v + 4 * (i - 1), 4) != 0;
    assert_true(distinct > 240);
}

/* An unknown colormap number falls back to gray rather than reading out of bounds. */
static void test_unknown_is_gray(void **state)
{
    (void)state;
    uint8_t a[256 * 4], b[256 * 4];
    render_colormap_lut(SIM_CMAP_GRAY, a);
    render_colormap_lut(99, b);
    assert_memory_equal(a, b, sizeof(a));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endpoints),     cmocka_unit_test(test_gray_ramp),
        cmocka_unit_test(test_maps_brighten), cmocka_unit_test(test_alpha_opaque),
        cmocka_unit_test(test_maps_differ),   cmocka_unit_test(test_unknown_is_gray),
    };
    return cmocka_run_group_tests_name("render_colormap", tests, NULL, NULL);
}
