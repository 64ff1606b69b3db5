/* render_frame.c - the frame-size and view-fitting rules, and render's names for the host
 * composition of sim_view.c (see render_frame.h). */
#include "render_frame.h"

#include <string.h>

#include "render_colormap.h"

/* round(a * num / den) for non-negative operands, in integers so that every platform agrees. */
static int scale_round(int64_t a, int64_t num, int64_t den)
{
    int64_t r = (a * num + den / 2) / den;
    return r < 1 ? 1 : (int)r;
}

void render_frame_size(const sim_scenario *sc, int *w, int *h)
{
    int ww = sc->width, wh = sc->height;
    int fw = sc->frame_width, fh = sc->frame_height;
    if (ww <= 0 || wh <= 0) {
        *w = 1;
        *h = 1;
        return;
    }
    if (fw > 0 && fh > 0) {
        *w = fw;
        *h = fh;
        return;
    }
    /* One side given: the other keeps the world's aspect ratio so cells stay square. */
    if (fw > 0) {
        *w = fw;
        *h = scale_round(fw, wh, ww);
        return;
    }
    if (fh > 0) {
        *h = fh;
        *w = scale_round(fh, ww, wh);
        return;
    }
    int longer = ww > wh ? ww : wh;
    if (longer > RENDER_FRAME_DEFAULT_MAX) {
        /* Shrink: the longer side lands exactly on the maximum, the shorter one is rounded. */
        int m = RENDER_FRAME_DEFAULT_MAX;
        *w = ww == longer ? m : scale_round(ww, m, longer);
        *h = wh == longer ? m : scale_round(wh, m, longer);
        return;
    }
    /* Grow small worlds by a whole factor so every cell is an equal block of pixels; for a
     * longer side under 512 the factor is >= 2 and the result lands in (512, 1024]. */
    int k = longer < RENDER_FRAME_DEFAULT_MIN ? RENDER_FRAME_DEFAULT_MAX / longer : 1;
    *w = ww * k;
    *h = wh * k;
}

void render_view_fit(sim_view *v, int world_w, int world_h, int img_w, int img_h)
{
    if (img_w < 1)
        img_w = 1;
    if (img_h < 1)
        img_h = 1;
    double sx = (double)world_w / (double)img_w;
    double sy = (double)world_h / (double)img_h;
    double s = sx > sy ? sx : sy;
    if (!(s > 0.0))
        s = 1.0; /* an empty world: any positive scale keeps sim_view's contract */
    v->w = img_w;
    v->h = img_h;
    v->scale = s;
    /* The image spans img * s cells along each axis; centre the world inside that span (the
     * offset is 0 along the axis that decided the scale, negative along the other). */
    v->x0 = ((double)world_w - (double)img_w * s) * 0.5;
    v->y0 = ((double)world_h - (double)img_h * s) * 0.5;
}

void render_view_colormap(sim_view *v, int cmap)
{
    /* White stands out on viridis, whose bright end is yellow; magma's and inferno's bright end
     * is pale yellow and gray's is white, where white agents vanish: cyan and red keep their
     * distance from every entry of those maps (test_render_frame checks it). */
    static const uint8_t agent[SIM_CMAP_COUNT][4] = {
        [SIM_CMAP_VIRIDIS] = {255, 255, 255, 255},
        [SIM_CMAP_MAGMA] = {0, 230, 255, 255},
        [SIM_CMAP_INFERNO] = {0, 230, 255, 255},
        [SIM_CMAP_GRAY] = {255, 40, 40, 255},
    };
    static const uint8_t moved[4] = {255, 0, 255, 255};
    /* Species 1..3 of a model, each far from its map and from the other agent colours. */
    static const uint8_t species[SIM_CMAP_COUNT][3][4] = {
        [SIM_CMAP_VIRIDIS] = {{255, 40, 40, 255}, {255, 120, 200, 255}, {0, 0, 0, 255}},
        [SIM_CMAP_MAGMA] = {{0, 255, 0, 255}, {0, 90, 255, 255}, {0, 130, 60, 255}},
        [SIM_CMAP_INFERNO] = {{0, 255, 0, 255}, {0, 90, 255, 255}, {0, 130, 60, 255}},
        [SIM_CMAP_GRAY] = {{0, 200, 255, 255}, {40, 255, 40, 255}, {255, 160, 0, 255}},
    };
    if (cmap < 0 || cmap >= SIM_CMAP_COUNT)
        cmap = SIM_CMAP_VIRIDIS;
    render_colormap_lut(cmap, v->lut);
    memcpy(v->agent_rgba, agent[cmap], 4);
    memcpy(v->moved_rgba, moved, 4);
    memcpy(v->species_rgba, species[cmap], sizeof v->species_rgba);
}

void render_view_init(sim_view *v, int cmap, float range_max)
{
    memset(v, 0, sizeof(*v));
    render_view_colormap(v, cmap);
    v->range_max = range_max;
    v->layer = SIM_LAYER_FIELD_AGENTS;
    v->scale = 1.0;
    v->background_rgba[3] = 255;
}

/* The host rule itself lives in sim/sim_view.c (sim_compose draws with it too); these keep
 * render's names for the viewer's host frames and the tests. */
void render_frame_occupancy(const uint32_t *agents, int64_t n, uint8_t *occ, int64_t cells)
{
    sim_view_occupancy(agents, n, occ, cells);
}

float render_field_max(const float *field, int64_t cells)
{
    return sim_view_field_max(field, cells);
}

void render_frame_compose(const sim_view *v, const float *field, int fw, int fh,
                          const uint8_t *occ, float field_max, uint8_t *rgba)
{
    sim_view_compose(v, field, fw, fh, occ, field_max, rgba);
}
