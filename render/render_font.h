/* render_font.h - the built-in bitmap font of the viewer's overlays and the frame legends: 5x7
 * glyphs for printable ASCII (32..126) drawn into a canvas at an integer scale. No font files,
 * so the HUD and the legends work everywhere. */
#ifndef RENDER_FONT_H
#define RENDER_FONT_H

#include "render_canvas.h"

#define RENDER_GLYPH_W 5   /* glyph pixels per row */
#define RENDER_GLYPH_H 7   /* glyph rows */
#define RENDER_DESCENT 2   /* g, p, q and y sit this many rows lower (their tails) */
#define RENDER_CELL_H 9    /* rows a line of text can ink: GLYPH_H + DESCENT */
#define RENDER_ADVANCE 6   /* pixels from one character to the next (one blank column) */
#define RENDER_LINE 10     /* pixels from one text line to the next (three blank rows) */

/* Whether pixel (col, row) of character ch is set; col 0..4, row 0..8 from the top of the
 * line (rows 7 and 8 only for the descending letters). Characters outside 32..126 draw as '?';
 * col/row outside the cell are unset. */
int render_font_pixel(int ch, int col, int row);

/* Width in pixels of the longest line of text at `scale` (lines split at '\n'):
 * n characters take n*ADVANCE - 1 pixels (no trailing blank column), times scale; 0 for "". */
int render_text_width(const char *text, int scale);

/* Height in pixels of the text's lines at `scale`: k lines take (k-1)*LINE + CELL_H, times
 * scale; "" is one line. */
int render_text_height(const char *text, int scale);

/* Draws text with its upper-left corner at (x, y), each font pixel a scale x scale block of col,
 * clipped to the canvas. '\n' starts a new line at x. */
void render_text_draw(render_canvas *c, int x, int y, const char *text, int scale,
                          render_rgba col);

#endif
