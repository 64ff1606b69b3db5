/* sim_view.h - the per-pixel rule that turns (field, agents) into an RGBA frame, shared by the
 * PNG writer, the viewer and the CUDA compose path so that every output shows the same pixels:
 * the view, the inline per-pixel helpers (host and device), and the host composition
 * (sim_view.c) that sim_compose uses for a backend without a compose op. */
#ifndef SIM_VIEW_H
#define SIM_VIEW_H

#include <stdint.h>

#include "sim_rules.h"

enum { SIM_LAYER_FIELD_AGENTS = 0, SIM_LAYER_FIELD = 1, SIM_LAYER_AGENTS = 2, SIM_LAYER_HORIZON = 3 };
#define SIM_LAYER_COUNT 4

/* What part of the world goes into an image of w*h pixels: pixel (px, py) shows the cell under
 * its centre, x = floor(x0 + (px + 0.5) * scale), likewise y (nearest neighbour: crisp cells when
 * zoomed in, one sample per pixel when zoomed out). Pixels outside the world are background. */
typedef struct sim_view {
    int w, h;          /* image size in pixels */
    double x0, y0;     /* world coordinate (cells) of the image's upper-left corner */
    double scale;      /* cells per pixel, > 0 */
    float range_max;   /* field value drawn with the last colormap entry; <= 0: auto (max) */
    int layer;         /* SIM_LAYER_* */
    uint8_t lut[256 * 4]; /* colormap, RGBA */
    uint8_t agent_rgba[4];
    uint8_t moved_rgba[4];  /* agents marked 2 in a host occupancy (the viewer's "moved" colouring) */
    uint8_t species_rgba[3][4]; /* agents of species 1, 2, 3 (occupancy codes 3, 4, 5) */
    uint8_t background_rgba[4];
} sim_view;

/* The cell coordinate a pixel samples, or -1 when it falls outside [0, n). SIM_HD: the CUDA
 * compose path evaluates the same double arithmetic. */
SIM_HD int sim_view_sample(double origin, double scale, int p, int n)
{
    double c = origin + ((double)p + 0.5) * scale;
    if (c < 0.0 || c >= (double)n)
        return -1;
    return (int)c;
}

/* Colormap index of a value: (int)(v * inv) clamped to 0..255, inv = 255 / range (host-computed
 * once per frame); NaN maps to 0. */
SIM_HD int sim_view_index(float v, float inv)
{
    float t = SIM_FMUL(v, inv);
    if (!(t > 0.0f))
        return 0;
    if (t >= 255.0f)
        return 255;
    return (int)t;
}

/* The scale factor for a frame: 255 / range_max, or 255 / field max when range_max <= 0
 * (and 0 when the field max is not positive, so every cell gets entry 0). */
static inline float sim_view_inv(float range_max, float field_max)
{
    float r = range_max > 0.0f ? range_max : field_max;
    return r > 0.0f ? 255.0f / r : 0.0f;
}

/* The occupancy code of an agent of species s: 1 for species 0 (agent_rgba), 3 + s - 1 for the
 * others (species_rgba[s - 1]); 2 is the viewer's "moved" mark. */
SIM_HD uint8_t sim_view_species_code(int s)
{
    return (uint8_t)(s == 0 ? 1 : 2 + s);
}

/* Host composition (sim_view.c). None of these fails or allocates. */

/* Marks occ[cell] = 1 for every agent cell (agents: n cell indices y*width+x) and 0 elsewhere;
 * occ has `cells` entries. Agent cells outside [0, cells) are ignored. */
void sim_view_occupancy(const uint32_t *agents, int64_t n, uint8_t *occ, int64_t cells);

/* The largest non-NaN value of field (cells entries); 0 when there is none: the field_max of
 * sim_view_compose when the view's range_max is automatic. */
float sim_view_field_max(const float *field, int64_t cells);

/* Draws the fw x fh world into rgba (v->w * v->h * 4 bytes, row-major, RGBA): each pixel samples
 * one cell (sim_view_sample); pixels outside the world get the background; the layer picks field
 * colours (FIELD and HORIZON: the caller passes the array to show), agents (AGENTS: agent colour
 * on occupied cells, background elsewhere) or both (FIELD_AGENTS: agents over the field).
 * field_max is used only when v->range_max <= 0. field may be NULL for the AGENTS layer and occ
 * may be NULL for "no agents"; an occ entry of 2 draws v->moved_rgba instead of v->agent_rgba,
 * 3..5 the colour of species 1..3. The caller keeps v valid (w, h >= 1, scale > 0, finite origin).
 * Deterministic for any thread count. */
void sim_view_compose(const sim_view *v, const float *field, int fw, int fh, const uint8_t *occ,
                      float field_max, uint8_t *rgba);

#endif
