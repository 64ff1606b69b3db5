/* test_gui_layer.c - the viewer's horizon layer (sums from the backend, sim_region_sums, for
 * the sampled cells only) against the brute-force disk sum (sim_horizon.h): periodic and walled
 * worlds, zoomed in (many pixels per cell), zoomed out (many cells per pixel) and panned half
 * off the world; pixel for pixel. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hz_test_util.h"
#include "render_frame.h"
#include "render_gui_layer.h"
#include "sim.h"
#include "sim_horizon.h"

static void expect_layer(const float *field, int fw, int fh, int periodic, int r,
                         const sim_view *v, const uint8_t *got)
{
    /* The oracle: every pixel's sample by the sim_view rule, its disk by brute force, the
     * colour stretched over the smallest .. largest sum among sampled cells. */
    size_t n = (size_t)v->w * v->h;
    float *val = malloc(n * sizeof *val);
    float vmin = INFINITY, vmax = -INFINITY;
    for (int py = 0; py < v->h; py++)
        for (int px = 0; px < v->w; px++) {
            int x = sim_view_sample(v->x0, v->scale, px, fw);
            int y = sim_view_sample(v->y0, v->scale, py, fh);
            float s = -1.0f;
            if (x >= 0 && y >= 0) {
                int64_t sum = sim_horizon_disk_brute(field, fw, fh, periodic, r, x, y);
                s = (float)((double)sum / (double)SIM_FIX_ONE);
                vmax = s > vmax ? s : vmax;
                vmin = s < vmin ? s : vmin;
            }
            val[(size_t)py * v->w + px] = s;
        }
    float inv = sim_view_inv(0.0f, vmax - vmin);
    for (size_t i = 0; i < n; i++) {
        int py = (int)(i / v->w), px = (int)(i % v->w);
        int outside = sim_view_sample(v->x0, v->scale, px, fw) < 0 ||
                      sim_view_sample(v->y0, v->scale, py, fh) < 0;
        const uint8_t *want =
            outside ? v->background_rgba : v->lut + 4 * sim_view_index(val[i] - vmin, inv);
        if (memcmp(got + 4 * i, want, 4) != 0)
            fail_msg("pixel (%d, %d) differs", px, py);
    }
    free(val);
}

static void test_layer_oracle(void **state)
{
    (void)state;
    enum { FW = 37, FH = 23 };
    float field[FW * FH];
    hz_rng rng = {12345};
    for (int i = 0; i < FW * FH; i++)
        field[i] = hz_uniform(&rng, -0.5f, 3.0f);
    field[5] = 1e9f; /* clamped by sim_fix like the model does */
    render_gui_layer *l;
    sim_err err;
    assert_int_equal(render_gui_layer_create(&l, &err), SIM_OK);
    const struct {
        double x0, y0, scale;
        int w, h;
    } views[] = {
        {0, 0, 1.0, FW, FH},        /* one pixel per cell */
        {-3.5, -2.25, 0.23, 61, 47}, /* zoomed in, panned off the corner */
        {10.2, 5.1, 0.5, 40, 30},    /* zoomed in, inside */
        {-5, -5, 2.7, 20, 15},       /* zoomed out */
        {20, 10, 1.3, 50, 40},       /* half off the far side */
    };
    const int radii[] = {0, 1, 4, 9, 30}; /* 30: a disk wider than the grid */
    uint8_t *rgba = malloc(64 * 64 * 4);
    for (int periodic = 0; periodic < 2; periodic++)
        for (size_t k = 0; k < sizeof views / sizeof views[0]; k++)
            for (size_t ri = 0; ri < sizeof radii / sizeof radii[0]; ri++) {
                sim_view v;
                render_view_init(&v, SIM_CMAP_VIRIDIS, 0.0f);
                v.background_rgba[0] = 7;
                v.layer = SIM_LAYER_HORIZON;
                v.x0 = views[k].x0;
                v.y0 = views[k].y0;
                v.scale = views[k].scale;
                v.w = views[k].w;
                v.h = views[k].h;
                sim_scenario sc;
                sim_scenario_defaults(&sc);
                sc.width = FW;
                sc.height = FH;
                sc.boundary = periodic ? SIM_BOUNDARY_PERIODIC : SIM_BOUNDARY_WALL;
                sc.radius = radii[ri];
                sc.count = 3;
                const uint32_t agents[3] = {0, 40, 100};
                sim *s;
                assert_int_equal(sim_create_from_state(&sc, sim_cpu_backend(), 2, 0, field,
                                                       agents, 3, &s, &err), SIM_OK);
                float vmin = 1.0f, vmax = -1.0f;
                assert_int_equal(render_gui_layer_draw(l, s, &v, rgba, &vmin, &vmax, &err),
                                 SIM_OK);
                sim_destroy(s);
                assert_true(vmax >= vmin);
                expect_layer(field, FW, FH, periodic, radii[ri], &v, rgba);
            }
    free(rgba);
    render_gui_layer_destroy(l);
    render_gui_layer_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layer_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
