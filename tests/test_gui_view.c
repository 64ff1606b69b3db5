/* test_gui_view.c - the viewer's camera (render_gui_view.h): zoom about a point keeps that point
 * fixed, pan moves the picture by whole pixels, resize keeps the centre, and the pixel <-> cell
 * mapping agrees with what frame composition draws. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render_frame.h"
#include "render_gui_view.h"

static void fitted(sim_view *v, int ww, int wh, int iw, int ih)
{
    render_view_init(v, SIM_CMAP_GRAY, 1.0f);
    render_view_fit(v, ww, wh, iw, ih);
}

static void test_zoom_keeps_point(void **state)
{
    (void)state;
    sim_view v;
    fitted(&v, 512, 256, 800, 600);
    const double pts[][2] = {{0, 0}, {400, 300}, {799.5, 10.25}, {123.5, 567.5}};
    const double factors[] = {1.25, 2.0, 0.5, 1.0 / 1.25, 7.0};
    for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++)
        for (size_t k = 0; k < sizeof factors / sizeof factors[0]; k++) {
            sim_view z = v;
            double wx0, wy0, wx1, wy1;
            render_gui_view_world(&z, pts[i][0], pts[i][1], &wx0, &wy0);
            render_gui_view_zoom(&z, factors[k], pts[i][0], pts[i][1], 1e-3, 1e3);
            render_gui_view_world(&z, pts[i][0], pts[i][1], &wx1, &wy1);
            assert_true(fabs(wx1 - wx0) < 1e-9);
            assert_true(fabs(wy1 - wy0) < 1e-9);
            assert_true(fabs(z.scale - v.scale / factors[k]) < 1e-12);
        }
}

static void test_zoom_clamps(void **state)
{
    (void)state;
    sim_view v;
    fitted(&v, 100, 100, 100, 100);
    render_gui_view_zoom(&v, 1000.0, 50, 50, 1.0 / 64, 4.0);
    assert_true(v.scale == 1.0 / 64);
    double wx, wy;
    render_gui_view_world(&v, 50, 50, &wx, &wy);
    assert_true(fabs(wx - 50.0) < 1e-9 && fabs(wy - 50.0) < 1e-9); /* still about the point */
    render_gui_view_zoom(&v, 1e-6, 10, 90, 1.0 / 64, 4.0);
    assert_true(v.scale == 4.0);
    double lo, hi;
    fitted(&v, 1000, 500, 500, 500);
    render_gui_view_limits(&v, 1000, 500, &lo, &hi);
    assert_true(lo == 1.0 / RENDER_GUI_ZOOM_MAX);
    assert_true(hi == 8.0); /* four times the fitted 2 cells per pixel */
}

static void test_zoom_in_out_roundtrip(void **state)
{
    (void)state;
    sim_view v, z;
    fitted(&v, 300, 200, 640, 480);
    z = v;
    render_gui_view_zoom(&z, 2.0, 100, 100, 1e-3, 1e3);
    render_gui_view_zoom(&z, 0.5, 100, 100, 1e-3, 1e3);
    assert_true(fabs(z.x0 - v.x0) < 1e-9 && fabs(z.y0 - v.y0) < 1e-9);
    assert_true(fabs(z.scale - v.scale) < 1e-12);
}

static void test_pan(void **state)
{
    (void)state;
    sim_view v;
    fitted(&v, 64, 64, 256, 256); /* 4 pixels per cell */
    double ax, ay, bx, by;
    render_gui_view_world(&v, 10, 20, &ax, &ay);
    render_gui_view_pan(&v, 30, -8);
    render_gui_view_world(&v, 40, 12, &bx, &by);
    assert_true(fabs(ax - bx) < 1e-12 && fabs(ay - by) < 1e-12);
    /* 8 pixels at 4 px per cell is 2 cells: pixel (0, 0) now shows cell (x, y+2)... */
    fitted(&v, 64, 64, 256, 256);
    render_gui_view_pan(&v, -8, -8);
    int cx, cy;
    assert_true(render_gui_view_cell(&v, 0, 0, 64, 64, &cx, &cy));
    assert_int_equal(cx, 2);
    assert_int_equal(cy, 2);
    /* ...and the left two columns of cells went out of view on the other side */
    assert_true(render_gui_view_cell(&v, 255, 255, 64, 64, &cx, &cy) == 0);
}

static void test_fit_and_resize(void **state)
{
    (void)state;
    sim_view v;
    fitted(&v, 200, 100, 400, 400); /* scale 0.5, the world centred vertically */
    assert_true(v.scale == 0.5);
    assert_true(v.x0 == 0.0);
    assert_true(v.y0 == -50.0);
    int cx, cy;
    assert_true(render_gui_view_cell(&v, 0, 100, 200, 100, &cx, &cy));
    assert_int_equal(cx, 0);
    assert_int_equal(cy, 0);
    assert_false(render_gui_view_cell(&v, 0, 99, 200, 100, &cx, &cy)); /* background above */
    double a, b, c, d;
    render_gui_view_world(&v, 200, 200, &a, &b);
    render_gui_view_resize(&v, 1000, 300);
    render_gui_view_world(&v, 500, 150, &c, &d);
    assert_true(fabs(a - c) < 1e-12 && fabs(b - d) < 1e-12);
    assert_int_equal(v.w, 1000);
    assert_int_equal(v.h, 300);
    assert_true(v.scale == 0.5);
}

/* The cell a pixel maps to is the cell composition paints there (a world whose field value
 * encodes the cell index, drawn with a gray LUT at odd zooms). */
static void test_cell_matches_compose(void **state)
{
    (void)state;
    enum { W = 16, H = 12 };
    float field[W * H];
    for (int i = 0; i < W * H; i++)
        field[i] = (float)i;
    const double scales[] = {0.13, 0.5, 1.0, 1.7, 3.3};
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        sim_view v;
        render_view_init(&v, SIM_CMAP_GRAY, 255.0f);
        v.layer = SIM_LAYER_FIELD;
        v.w = 37;
        v.h = 29;
        v.scale = scales[k];
        v.x0 = -1.3;
        v.y0 = 0.7;
        uint8_t *rgba = malloc((size_t)v.w * v.h * 4);
        render_frame_compose(&v, field, W, H, NULL, 0.0f, rgba);
        for (int py = 0; py < v.h; py++)
            for (int px = 0; px < v.w; px++) {
                int cx, cy;
                const uint8_t *p = rgba + ((size_t)py * v.w + px) * 4;
                if (render_gui_view_cell(&v, px, py, W, H, &cx, &cy)) {
                    int want = sim_view_index(field[cy * W + cx], 1.0f);
                    assert_int_equal(p[0], v.lut[4 * want]);
                    /* and the pixel lies in the rectangle of that cell */
                    int rx, ry, rw, rh;
                    render_gui_view_cell_rect(&v, cx, cy, &rx, &ry, &rw, &rh);
                    assert_true(px >= rx && px < rx + rw && py >= ry && py < ry + rh);
                } else {
                    assert_memory_equal(p, v.background_rgba, 4);
                }
            }
        free(rgba);
    }
}

/* cell_rect covers exactly the pixels that sample the cell. */
static void test_cell_rect_exact(void **state)
{
    (void)state;
    sim_view v;
    render_view_init(&v, SIM_CMAP_GRAY, 1.0f);
    v.w = v.h = 200;
    const double scales[] = {0.1, 0.25, 0.3333, 1.0, 2.5};
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        v.scale = scales[k];
        v.x0 = -0.37;
        v.y0 = 3.21;
        for (int c = 0; c < 10; c++) {
            int x, y, w, h;
            render_gui_view_cell_rect(&v, c, c, &x, &y, &w, &h);
            for (int p = -5; p < 205; p++) {
                int in_x = p >= x && p < x + w;
                int in_y = p >= y && p < y + h;
                assert_int_equal(in_x, sim_view_sample(v.x0, v.scale, p, 1000) == c);
                assert_int_equal(in_y, sim_view_sample(v.y0, v.scale, p, 1000) == c);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zoom_keeps_point),  cmocka_unit_test(test_zoom_clamps),
        cmocka_unit_test(test_zoom_in_out_roundtrip), cmocka_unit_test(test_pan),
        cmocka_unit_test(test_fit_and_resize),    cmocka_unit_test(test_cell_matches_compose),
        cmocka_unit_test(test_cell_rect_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
