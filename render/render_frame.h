/* render_frame.h - the frame-size and view-fitting rules, and host frame composition:
 * (field, agents, view) -> RGBA, the reference that the GPU compose path must match pixel for
 * pixel. The composition is sim_view.c's (sim_compose uses it for backends without a compose
 * op); the render_frame_* names below are the same functions, for the viewer's host frames. */
#ifndef RENDER_FRAME_H
#define RENDER_FRAME_H

#include <stdint.h>

#include "sim_scenario.h"
#include "sim_view.h"

/* Longest side, in pixels, of a frame whose size the scenario leaves open. */
#define RENDER_FRAME_DEFAULT_MAX 1024
/* Below this longest side a small world is scaled up by an integer factor. */
#define RENDER_FRAME_DEFAULT_MIN 512

/* The frame size for sc (pixels, each >= 1). output.frame_width/frame_height are used when both
 * are set; when exactly one is 0 it follows from the world's aspect ratio; when both are 0 a
 * world longer than 1024 cells shrinks so its longer side is 1024, one shorter than 512 grows by
 * the largest integer factor that keeps the longer side <= 1024, and one in between is drawn
 * one pixel per cell. Never fails: a world with a side <= 0 gives 1x1. */
void render_frame_size(const sim_scenario *sc, int *w, int *h);

/* Sets v->w, v->h, v->x0, v->y0 and v->scale so that the whole world_w x world_h world fits the
 * img_w x img_h image, centred, with square cells: scale = max(world_w / img_w, world_h / img_h)
 * cells per pixel. The colormap, colours, layer and range are left as they were. */
void render_view_fit(sim_view *v, int world_w, int world_h, int img_w, int img_h);

/* Sets v's colormap lut (SIM_CMAP_*; an unknown one is viridis) and the agent colours that go
 * with it: agents white on viridis, cyan on magma and inferno, red on gray (colours that no entry
 * of the map comes close to), and magenta for moved agents (occupancy 2) on every map. */
void render_view_colormap(sim_view *v, int cmap);

/* Initialises the drawing style of v: render_view_colormap(v, cmap),
 * background opaque black, layer SIM_LAYER_FIELD_AGENTS, range_max as given (<= 0: auto).
 * The geometry (w, h, x0, y0, scale) is zeroed: call render_view_fit next. */
void render_view_init(sim_view *v, int cmap, float range_max);

/* sim_view_occupancy: marks occ[cell] = 1 for every agent cell (agents: n cell indices
 * y*width+x) and 0 elsewhere; occ has `cells` entries. Agent cells outside [0, cells) are
 * ignored. */
void render_frame_occupancy(const uint32_t *agents, int64_t n, uint8_t *occ, int64_t cells);

/* sim_view_field_max: the largest non-NaN value of field (cells entries); 0 when there is none.
 * This is the field_max of render_frame_compose when the view's range_max is automatic. */
float render_field_max(const float *field, int64_t cells);

/* sim_view_compose: draws the fw x fh world into rgba (v->w * v->h * 4 bytes, row-major, RGBA)
 * following the rule of sim_view.h: each pixel samples one cell; pixels outside the world get
 * the background; the layer picks field colours (FIELD and HORIZON: the caller passes the array
 * to show), agents (AGENTS: agent colour on occupied cells, background elsewhere) or both
 * (FIELD_AGENTS: agents over the field). field_max is used only when v->range_max <= 0. field
 * may be NULL for the AGENTS layer and occ may be NULL for "no agents". Deterministic for any
 * thread count. */
void render_frame_compose(const sim_view *v, const float *field, int fw, int fh,
                          const uint8_t *occ, float field_max, uint8_t *rgba);

#endif
