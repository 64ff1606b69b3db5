/* render_gui_layer.h - the viewer's horizon layer: the disk sum of radius r (what an agent
 * senses) at every cell the view samples, asked of the backend for those cells only
 * (sim_region_sums: the CPU backend's row prefixes, a kernel on the GPU) and drawn through the
 * colormap with the per-pixel rule of sim_view.h. */
#ifndef RENDER_GUI_LAYER_H
#define RENDER_GUI_LAYER_H

#include <stdint.h>

#include "sim.h"

typedef struct render_gui_layer render_gui_layer;

/* Scratch memory for the layer, grown on demand and kept between frames. */
int render_gui_layer_create(render_gui_layer **out, sim_err *err);
void render_gui_layer_destroy(render_gui_layer *l); /* NULL is a no-op */

/* Draws into rgba (v->w * v->h * 4 bytes) the horizon sums of s's current state for the view v:
 * pixel (px, py) samples cell (x, y) by sim_view_sample and shows S(x, y) / SIM_FIX_ONE, the
 * exact fixed-point disk sum of the scenario's radius (sim_region_sums), coloured with v->lut
 * stretched over the smallest .. largest sum in view: entry sim_view_index(S - min,
 * 255 / (max - min)). v->range_max is not used (sums are in field units times the disk area).
 * Background pixels get v->background_rgba. Work: one sum per distinct sampled cell, never more
 * than the cells in view.
 * Returns SIM_OK, SIM_ENOMEM (scratch could not grow) or the backend's status (message in err);
 * rgba is untouched on failure. *vis_min and *vis_max, when not NULL, receive the range in view
 * (0 and 0 when no cell is in view). */
int render_gui_layer_draw(render_gui_layer *l, sim *s, const sim_view *v, uint8_t *rgba,
                          float *vis_min, float *vis_max, sim_err *err);

#endif
