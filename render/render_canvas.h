/* render_canvas.h - software drawing on an RGBA8 buffer for the viewer's overlays (HUD, help,
 * inspect panel, plot) and the frame legends: filled and blended rectangles, lines, outlines.
 * No SDL here, so the drawing is testable and every overlay looks the same on every renderer. */
#ifndef RENDER_CANVAS_H
#define RENDER_CANVAS_H

#include <stdint.h>

/* A w x h image, row-major RGBA8 with rows of exactly w*4 bytes. The canvas does not own px. */
typedef struct render_canvas {
    uint8_t *px;
    int w, h;
} render_canvas;

/* An RGBA colour; a < 255 blends over what is there ("source over"). */
typedef struct render_rgba {
    uint8_t r, g, b, a;
} render_rgba;

/* Sets every pixel to c (no blending: a panel starts from its own background). */
void render_canvas_clear(render_canvas *c, render_rgba col);

/* Blends col over one pixel; pixels outside the canvas are ignored. */
void render_canvas_dot(render_canvas *c, int x, int y, render_rgba col);

/* Blends col over the rectangle [x, x+w) x [y, y+h), clipped to the canvas. */
void render_canvas_fill(render_canvas *c, int x, int y, int w, int h,
                            render_rgba col);

/* A one-pixel outline of the rectangle [x, x+w) x [y, y+h), clipped. */
void render_canvas_frame(render_canvas *c, int x, int y, int w, int h,
                             render_rgba col);

/* A one-pixel line from (x0, y0) to (x1, y1), both ends included (Bresenham), clipped. */
void render_canvas_line(render_canvas *c, int x0, int y0, int x1, int y1,
                            render_rgba col);

#endif
