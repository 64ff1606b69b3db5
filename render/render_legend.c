/* render_legend.c - the colour bar with its range (see render_legend.h for the layout). Every
 * size follows from the label and the scale alone, so a frame's legend sits in the same place
 * in every frame of a run, however its numbers change. */
#include "render_legend.h"

#include <stdio.h>

#include "render_font.h"

#define LABEL_GAP 3 /* font pixels between the label and the bar */
#define NUM_GAP 3   /* ... and between the bar and the numbers */

/* Black at alpha 200: the field shows faintly through, the text stays readable on any colormap. */
static const render_rgba panel_rgba = {0, 0, 0, 200};
static const render_rgba ink_rgba = {235, 235, 235, 255};
/* An outline around the bar, so that its dark end does not melt into the panel. */
static const render_rgba outline_rgba = {150, 150, 150, 255};

void render_horizon_what(char *buf, size_t n, const sim_scenario *sc, int agent)
{
    if (n == 0)
        return;
    if (sc->n_species == 0)
        snprintf(buf, n, "horizon sums r=%d", sc->radius);
    else if (agent)
        snprintf(buf, n, "%s scores r=%d", sc->species[0].name, sc->species[0].radius);
    else
        snprintf(buf, n, "horizon sums r=%d", sc->species[0].radius);
}

void render_legend_label(char *buf, size_t n, const char *what, float range_max, int in_view)
{
    if (n == 0)
        return;
    if (range_max > 0.0f)
        snprintf(buf, n, "%s  fixed: output.range_max", what);
    else
        snprintf(buf, n, "%s  auto: %s", what, in_view ? "range in view" : "frame max");
}

/* The bar's width in pixels: wide enough for both numbers and for the label. */
static int bar_width(const char *label, int scale)
{
    int bw = RENDER_LEGEND_BAR_MIN_W * scale;
    int tw = render_text_width(label, scale);
    return tw > bw ? tw : bw;
}

void render_legend_size(const char *label, int scale, int *w, int *h)
{
    if (scale < 1)
        scale = 1;
    *w = bar_width(label, scale) + 2 * RENDER_LEGEND_PAD * scale;
    *h = (2 * RENDER_LEGEND_PAD + RENDER_CELL_H + LABEL_GAP + RENDER_LEGEND_BAR_H + NUM_GAP +
          RENDER_CELL_H) * scale;
}

void render_legend_draw(render_canvas *c, int x, int y, const uint8_t lut[256 * 4], double lo,
                        double hi, const char *label, int scale)
{
    if (scale < 1)
        scale = 1;
    int w, h;
    render_legend_size(label, scale, &w, &h);
    int pad = RENDER_LEGEND_PAD * scale;
    render_canvas_fill(c, x, y, w, h, panel_rgba);
    render_text_draw(c, x + pad, y + pad, label, scale, ink_rgba);

    int bx = x + pad, bw = w - 2 * pad;
    int by = y + pad + (RENDER_CELL_H + LABEL_GAP) * scale, bh = RENDER_LEGEND_BAR_H * scale;
    /* The outline lies in the padding (pad >= 4 > 1), so it never covers the bar. */
    render_canvas_frame(c, bx - 1, by - 1, bw + 2, bh + 2, outline_rgba);
    for (int i = 0; i < bw; i++) {
        /* i * 256 / bw < 256 for i < bw: every index is in range. Column 0 is entry 0; the last
         * column is 255 from bw >= 256 on, 254 below (the rule samples, it does not stretch). */
        const uint8_t *e = lut + 4 * (int)((long long)i * 256 / bw);
        render_rgba col = {e[0], e[1], e[2], 255};
        render_canvas_fill(c, bx + i, by, 1, bh, col);
    }

    /* %.4g of a double is at most RENDER_LEGEND_NUM_CHARS characters, and the bar is at least
     * two of those plus a blank wide, so lo and hi never overlap. */
    char num[32];
    int ny = by + bh + NUM_GAP * scale;
    snprintf(num, sizeof num, "%.4g", lo);
    render_text_draw(c, bx, ny, num, scale, ink_rgba);
    snprintf(num, sizeof num, "%.4g", hi);
    render_text_draw(c, bx + bw - render_text_width(num, scale), ny, num, scale, ink_rgba);
}

/* render_legend_place's rule; returns the scale used, 0 when nothing fits. */
static int place(const char *label, int w, int h, int *x, int *y, int *lw, int *lh)
{
    /* Scale 2 keeps the text legible where a frame is shown shrunk (a 1000+ pixel frame on a
     * laptop screen or in a video); smaller frames are usually looked at one to one. */
    for (int scale = w >= 1000 ? 2 : 1; scale >= 1; scale--) {
        int m = RENDER_LEGEND_MARGIN * scale;
        render_legend_size(label, scale, lw, lh);
        if (*lw + 2 * m <= w && *lh + 2 * m <= h) {
            *x = w - m - *lw;
            *y = h - m - *lh;
            return scale;
        }
    }
    *x = *y = *lw = *lh = 0;
    return 0;
}

int render_legend_place(const char *label, int w, int h, int *x, int *y, int *lw, int *lh)
{
    return place(label, w, h, x, y, lw, lh) > 0;
}

void render_legend_stamp(uint8_t *rgba, int w, int h, const uint8_t lut[256 * 4], double lo,
                         double hi, const char *label)
{
    int x, y, lw, lh;
    int scale = place(label, w, h, &x, &y, &lw, &lh);
    if (scale == 0)
        return;
    render_canvas c = {rgba, w, h};
    render_legend_draw(&c, x, y, lut, lo, hi, label, scale);
}
