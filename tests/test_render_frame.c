/* test_render_frame.c - host frame composition on tiny hand-made worlds: geometry of the fit,
 * layers, colour scaling, and the default frame size rules. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <omp.h>

#include "render_frame.h"

/* A gray view with range 255, so a field value v (0..255) draws as gray level (int)v. */
static void gray_view(sim_view *v, int layer, int ww, int wh, int iw, int ih)
{
    render_view_init(v, SIM_CMAP_GRAY, 255.0f);
    v->layer = layer;
    v->background_rgba[0] = 1; /* distinct from every gray level a test field uses */
    v->background_rgba[1] = 2;
    v->background_rgba[2] = 3;
    v->agent_rgba[0] = 200; /* not a gray: tells agents from field */
    v->agent_rgba[1] = 10;
    v->agent_rgba[2] = 20;
    render_view_fit(v, ww, wh, iw, ih);
}

static void assert_pixel(const uint8_t *rgba, int w, int px, int py, const uint8_t *want)
{
    assert_memory_equal(rgba + ((size_t)py * (size_t)w + (size_t)px) * 4, want, 4);
}

static void assert_gray(const uint8_t *rgba, int w, int px, int py, int level)
{
    const uint8_t want[4] = {(uint8_t)level, (uint8_t)level, (uint8_t)level, 255};
    assert_pixel(rgba, w, px, py, want);
}

static void test_view_init(void **state)
{
    (void)state;
    sim_view v;
    memset(&v, 0x5a, sizeof(v));
    render_view_init(&v, SIM_CMAP_VIRIDIS, 0.0f);
    assert_int_equal(v.layer, SIM_LAYER_FIELD_AGENTS);
    assert_true(v.range_max == 0.0f);
    const uint8_t white[4] = {255, 255, 255, 255}, black[4] = {0, 0, 0, 255};
    assert_memory_equal(v.agent_rgba, white, 4);
    assert_memory_equal(v.background_rgba, black, 4);
    assert_int_equal(v.lut[0], 68);
    assert_int_equal(v.lut[3], 255);
}

/* The fit keeps the style fields and places a same-size world at scale 1, origin 0. */
static void test_fit_exact(void **state)
{
    (void)state;
    sim_view v;
    gray_view(&v, SIM_LAYER_FIELD, 4, 3, 4, 3);
    assert_true(v.scale == 1.0 && v.x0 == 0.0 && v.y0 == 0.0);
    assert_int_equal(v.w, 4);
    assert_int_equal(v.h, 3);
    assert_int_equal(v.agent_rgba[0], 200); /* untouched by the fit */

    float field[12];
    for (int i = 0; i < 12; i++)
        field[i] = (float)(i * 10);
    uint8_t rgba[12 * 4];
    render_frame_compose(&v, field, 4, 3, NULL, 0.0f, rgba);
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 4; x++)
            assert_gray(rgba, 4, x, y, (y * 4 + x) * 10);
}

/* Zoomed in 3x: every cell is a 3x3 block of one colour. */
static void test_upscale_blocks(void **state)
{
    (void)state;
    sim_view v;
    gray_view(&v, SIM_LAYER_FIELD, 3, 2, 9, 6);
    float field[6] = {10, 20, 30, 40, 50, 60};
    uint8_t rgba[9 * 6 * 4];
    render_frame_compose(&v, field, 3, 2, NULL, 0.0f, rgba);
    for (int py = 0; py < 6; py++)
        for (int px = 0; px < 9; px++)
            assert_gray(rgba, 9, px, py, (int)field[(py / 3) * 3 + px / 3]);
}

/* Zoomed out 2x: each pixel shows one cell of its 2x2 block (the one under its centre). */
static void test_downscale_samples(void **state)
{
    (void)state;
    sim_view v;
    gray_view(&v, SIM_LAYER_FIELD, 4, 4, 2, 2);
    assert_true(v.scale == 2.0);
    float field[16];
    for (int i = 0; i < 16; i++)
        field[i] = (float)i;
    uint8_t rgba[2 * 2 * 4];
    render_frame_compose(&v, field, 4, 4, NULL, 0.0f, rgba);
    /* centre of pixel p is at cell coordinate (p + 0.5) * 2 = 2p + 1 */
    assert_gray(rgba, 2, 0, 0, 5);
    assert_gray(rgba, 2, 1, 0, 7);
    assert_gray(rgba, 2, 0, 1, 13);
    assert_gray(rgba, 2, 1, 1, 15);
}

static void test_agents_over_field(void **state)
{
    (void)state;
    float field[6] = {10, 20, 30, 40, 50, 60};
    uint32_t agents[2] = {1, 5}; /* cells (1,0) and (2,1) */
    uint8_t occ[6];
    memset(occ, 7, sizeof(occ));
    render_frame_occupancy(agents, 2, occ, 6);
    const uint8_t want_occ[6] = {0, 1, 0, 0, 0, 1};
    assert_memory_equal(occ, want_occ, 6);

    sim_view v;
    uint8_t rgba[6 * 4];
    gray_view(&v, SIM_LAYER_FIELD_AGENTS, 3, 2, 3, 2);
    render_frame_compose(&v, field, 3, 2, occ, 0.0f, rgba);
    for (int c = 0; c < 6; c++) {
        if (occ[c])
            assert_pixel(rgba, 3, c % 3, c / 3, v.agent_rgba);
        else
            assert_gray(rgba, 3, c % 3, c / 3, (int)field[c]);
    }

    /* AGENTS: background where no agent stands. */
    v.layer = SIM_LAYER_AGENTS;
    render_frame_compose(&v, field, 3, 2, occ, 0.0f, rgba);
    for (int c = 0; c < 6; c++)
        assert_pixel(rgba, 3, c % 3, c / 3, occ[c] ? v.agent_rgba : v.background_rgba);

    /* FIELD and HORIZON ignore the agents. */
    for (int layer = SIM_LAYER_FIELD; layer <= SIM_LAYER_HORIZON; layer += 2) {
        v.layer = layer;
        render_frame_compose(&v, field, 3, 2, occ, 0.0f, rgba);
        for (int c = 0; c < 6; c++)
            assert_gray(rgba, 3, c % 3, c / 3, (int)field[c]);
    }
}

/* A 4x2 world in an 8x8 image: scale 0.5, two rows of background above and below. */
static void test_background_outside(void **state)
{
    (void)state;
    sim_view v;
    gray_view(&v, SIM_LAYER_FIELD, 4, 2, 8, 8);
    assert_true(v.scale == 0.5 && v.x0 == 0.0 && v.y0 == -1.0);
    float field[8] = {100, 101, 102, 103, 104, 105, 106, 107};
    uint8_t rgba[8 * 8 * 4];
    render_frame_compose(&v, field, 4, 2, NULL, 0.0f, rgba);
    for (int py = 0; py < 8; py++)
        for (int px = 0; px < 8; px++) {
            if (py < 2 || py >= 6)
                assert_pixel(rgba, 8, px, py, v.background_rgba);
            else
                assert_gray(rgba, 8, px, py, (int)field[((py - 2) / 2) * 4 + px / 2]);
        }

    /* The same world standing up (2x4) gets background columns instead. */
    gray_view(&v, SIM_LAYER_FIELD, 2, 4, 8, 8);
    render_frame_compose(&v, field, 2, 4, NULL, 0.0f, rgba);
    for (int py = 0; py < 8; py++) {
        assert_pixel(rgba, 8, 0, py, v.background_rgba);
        assert_pixel(rgba, 8, 7, py, v.background_rgba);
        assert_gray(rgba, 8, 2, py, (int)field[(py / 2) * 2]);
    }
}

static void test_range_fixed_vs_auto(void **state)
{
    (void)state;
    float field[3] = {0.0f, 5.0f, 10.0f};
    uint8_t rgba[3 * 4];
    sim_view v;
    gray_view(&v, SIM_LAYER_FIELD, 3, 1, 3, 1);

    v.range_max = 0.0f; /* auto: the field's own max gets the last entry */
    float m = render_field_max(field, 3);
    assert_true(m == 10.0f);
    render_frame_compose(&v, field, 3, 1, NULL, m, rgba);
    assert_gray(rgba, 3, 0, 0, 0);
    assert_gray(rgba, 3, 1, 0, 127); /* 5 * 25.5 = 127.5 -> 127 */
    assert_gray(rgba, 3, 2, 0, 255);

    v.range_max = 20.0f; /* fixed: field_max is ignored */
    render_frame_compose(&v, field, 3, 1, NULL, m, rgba);
    assert_gray(rgba, 3, 1, 0, 63);  /* 5 * 12.75 = 63.75 */
    assert_gray(rgba, 3, 2, 0, 127); /* 10 * 12.75 = 127.5 */

    v.range_max = 2.0f; /* values above the range clamp to the last entry */
    render_frame_compose(&v, field, 3, 1, NULL, m, rgba);
    assert_gray(rgba, 3, 1, 0, 255);

    v.range_max = 0.0f; /* auto with a field that is all zero: everything entry 0 */
    float zero[3] = {0, 0, 0};
    render_frame_compose(&v, zero, 3, 1, NULL, render_field_max(zero, 3), rgba);
    for (int x = 0; x < 3; x++)
        assert_gray(rgba, 3, x, 0, 0);
}

static void test_nan_and_negative(void **state)
{
    (void)state;
    float field[4] = {NAN, 8.0f, -3.0f, INFINITY};
    float m = render_field_max(field, 2); /* NaN skipped */
    assert_true(m == 8.0f);
    float only_nan[2] = {NAN, NAN};
    assert_true(render_field_max(only_nan, 2) == 0.0f);
    assert_true(render_field_max(field, 0) == 0.0f);

    sim_view v;
    gray_view(&v, SIM_LAYER_FIELD, 4, 1, 4, 1);
    v.range_max = 16.0f;
    uint8_t rgba[4 * 4];
    render_frame_compose(&v, field, 4, 1, NULL, 0.0f, rgba);
    assert_gray(rgba, 4, 0, 0, 0);   /* NaN -> entry 0 */
    assert_gray(rgba, 4, 1, 0, 127); /* 8 * 255/16 = 127.5 */
    assert_gray(rgba, 4, 2, 0, 0);   /* negative clamps to 0 */
    assert_gray(rgba, 4, 3, 0, 255); /* +inf clamps to 255 */
}

/* The result does not depend on the number of OpenMP threads. */
static void test_deterministic(void **state)
{
    (void)state;
    enum { FW = 97, FH = 61, IW = 333, IH = 250 };
    float *field = malloc(sizeof(float) * FW * FH);
    uint8_t *occ = malloc(FW * FH);
    uint8_t *a = malloc((size_t)IW * IH * 4), *b = malloc((size_t)IW * IH * 4);
    assert_non_null(field);
    assert_non_null(occ);
    assert_non_null(a);
    assert_non_null(b);
    uint32_t s = 12345;
    for (int i = 0; i < FW * FH; i++) {
        s = s * 1664525u + 1013904223u;
        field[i] = (float)(s >> 8) / 16777216.0f * 3.0f;
        occ[i] = (s >> 4) % 7 == 0;
    }
    sim_view v;
    render_view_init(&v, SIM_CMAP_MAGMA, 0.0f);
    render_view_fit(&v, FW, FH, IW, IH);
    float m = render_field_max(field, FW * FH);
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    render_frame_compose(&v, field, FW, FH, occ, m, a);
    omp_set_num_threads(4);
    render_frame_compose(&v, field, FW, FH, occ, m, b);
    omp_set_num_threads(saved);
    assert_memory_equal(a, b, (size_t)IW * IH * 4);
    free(field);
    free(occ);
    free(a);
    free(b);
}

static void frame_size(int ww, int wh, int fw, int fh, int *w, int *h)
{
    sim_scenario sc;
    memset(&sc, 0, sizeof(sc));
    sc.width = ww;
    sc.height = wh;
    sc.frame_width = fw;
    sc.frame_height = fh;
    render_frame_size(&sc, w, h);
}

#define ASSERT_SIZE(ww, wh, fw, fh, ew, eh)                                                      \
    do {                                                                                         \
        int w_, h_;                                                                              \
        frame_size(ww, wh, fw, fh, &w_, &h_);                                                    \
        assert_int_equal(w_, ew);                                                                \
        assert_int_equal(h_, eh);                                                                \
    } while (0)

static void test_frame_size(void **state)
{
    (void)state;
    ASSERT_SIZE(4096, 2048, 0, 0, 1024, 512);  /* shrink, longer side 1024 */
    ASSERT_SIZE(1000, 3000, 0, 0, 341, 1024);  /* 1000 * 1024 / 3000 = 341.3 */
    ASSERT_SIZE(5000, 1, 0, 0, 1024, 1);       /* never below one pixel */
    ASSERT_SIZE(1024, 1024, 0, 0, 1024, 1024); /* in range: one pixel per cell */
    ASSERT_SIZE(600, 300, 0, 0, 600, 300);
    ASSERT_SIZE(512, 100, 0, 0, 512, 100);
    ASSERT_SIZE(511, 2, 0, 0, 1022, 4);        /* largest factor keeping <= 1024: 2 */
    ASSERT_SIZE(100, 50, 0, 0, 1000, 500);     /* factor 10 */
    ASSERT_SIZE(3, 3, 0, 0, 1023, 1023);       /* factor 341 */
    ASSERT_SIZE(1, 1, 0, 0, 1024, 1024);
    ASSERT_SIZE(400, 200, 800, 0, 800, 400);   /* one side given: aspect kept */
    ASSERT_SIZE(400, 200, 0, 100, 200, 100);
    ASSERT_SIZE(1000, 1, 10, 0, 10, 1);
    ASSERT_SIZE(400, 200, 640, 480, 640, 480); /* both given: as given */
}

/* Agents stay visible on every colormap: their colour (and the moved colour) is far, in RGB, from
 * every entry of the map they are drawn over. White agents on gray's white end failed this. */
static void test_agent_contrast(void **state)
{
    (void)state;
    for (int cmap = 0; cmap < SIM_CMAP_COUNT; cmap++) {
        sim_view v;
        render_view_init(&v, cmap, 0.0f);
        const uint8_t *cols[5] = {v.agent_rgba, v.moved_rgba, v.species_rgba[0],
                                  v.species_rgba[1], v.species_rgba[2]};
        for (int k = 0; k < 5; k++) {
            double nearest = 1e9;
            for (int i = 0; i < 256; i++) {
                double d = 0.0;
                for (int c = 0; c < 3; c++) {
                    double e = (double)cols[k][c] - (double)v.lut[4 * i + c];
                    d += e * e;
                }
                nearest = d < nearest ? d : nearest;
            }
            if (sqrt(nearest) < 90.0)
                fail_msg("colormap %d: colour %d (agent, moved, species 1-3) is %.1f from a map "
                         "entry", cmap, k, sqrt(nearest));
            for (int j = 0; j < k; j++)
                assert_int_not_equal(memcmp(cols[j], cols[k], 4), 0);
        }
        assert_int_not_equal(memcmp(v.agent_rgba, v.moved_rgba, 4), 0);
    }
}

/* The viewer's moved colouring: occupancy 2 draws the moved colour. */
static void test_moved_colour(void **state)
{
    (void)state;
    sim_view v;
    render_view_init(&v, SIM_CMAP_VIRIDIS, 1.0f);
    render_view_fit(&v, 2, 1, 2, 1);
    float field[2] = {0.5f, 0.5f};
    uint8_t occ[2] = {1, 2}, rgba[8];
    render_frame_compose(&v, field, 2, 1, occ, 1.0f, rgba);
    assert_memory_equal(rgba, v.agent_rgba, 4);
    assert_memory_equal(rgba + 4, v.moved_rgba, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_init),         cmocka_unit_test(test_fit_exact),
        cmocka_unit_test(test_upscale_blocks),    cmocka_unit_test(test_downscale_samples),
        cmocka_unit_test(test_agents_over_field), cmocka_unit_test(test_background_outside),
        cmocka_unit_test(test_range_fixed_vs_auto), cmocka_unit_test(test_nan_and_negative),
        cmocka_unit_test(test_deterministic),     cmocka_unit_test(test_frame_size),
        cmocka_unit_test(test_agent_contrast), cmocka_unit_test(test_moved_colour),
    };
    return cmocka_run_group_tests_name("render_frame", tests, NULL, NULL);
}
