/* render_colormap.h - 256-entry RGBA lookup tables for the scenario's colormaps. */
#ifndef RENDER_COLORMAP_H
#define RENDER_COLORMAP_H

#include <stdint.h>

/* Fills lut (256 entries, RGBA, alpha 255) with colormap cmap (SIM_CMAP_*). Entry 0 is the
 * low end, entry 255 the high end. An unknown cmap gets gray, so a caller that validated its
 * scenario never sees a difference and one that did not still gets a readable image. */
void render_colormap_lut(int cmap, uint8_t lut[256 * 4]);

#endif
