/* render_gui_layer.h - the viewer's horizon layer: the disk sum of radius r (what an agent
 * senses) at every cell the view samples, computed on the host for the visible region only and
 * drawn through the colormap with the per-pixel rule of sim_view.h. */
#ifndef RENDER_GUI_LAYER_H
#define RENDER_GUI_LAYER_H

#include <stdint.h>

#include "sim_status.h"
#include "sim_view.h"

typedef struct render_gui_layer render_gui_layer;

/* Scratch memory for the layer, grown on demand and kept between frames. */
int render_gui_layer_create(render_gui_layer **out, sim_err *err);
void render_gui_layer_destroy(render_gui_layer *l); /* NULL is a no-op */

/* Draws into rgba (v->w * v->h * 4 bytes) the horizon sums of the fw x fh field for the view v:
 * pixel (px, py) samples cell (x, y) by sim_view_sample and shows S(x, y) / SIM_FIX_ONE, the exact
 * fixed-point disk sum of radius r (sim_rules.h; periodic wraps, otherwise cells outside count
 * 0), coloured with v->lut stretched over the smallest .. largest sum in view: entry
 * sim_view_index(S - min, 255 / (max - min)). v->range_max is not used (sums are in field
 * units times the disk area). Background pixels get v->background_rgba.
 *
 * Work: one row prefix of about (sampled columns' span + 2r) cells for each of the 2r+1 rows
 * of each distinct sampled row, plus O(r) per distinct sampled cell; never more than the field
 * rows in view, so a zoomed-in view of a huge grid costs what it shows. Uses OpenMP.
 * Returns SIM_OK or SIM_ENOMEM (scratch could not grow; rgba is then untouched). *vis_min and
 * *vis_max, when not NULL, receive the range in view (0 and 0 when no cell is in view). */
int render_gui_layer_horizon(render_gui_layer *l, const sim_view *v, const float *field,
                             int fw, int fh, int periodic, int r, uint8_t *rgba, float *vis_min,
                             float *vis_max, sim_err *err);

#endif
