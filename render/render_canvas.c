/* render_canvas.c - software drawing on RGBA8 buffers (see render_canvas.h). */
#include "render_canvas.h"

#include <stdlib.h>

void render_canvas_clear(render_canvas *c, render_rgba col)
{
    size_t n = (size_t)c->w * (size_t)c->h;
    for (size_t i = 0; i < n; i++) {
        uint8_t *p = c->px + 4 * i;
        p[0] = col.r;
        p[1] = col.g;
        p[2] = col.b;
        p[3] = col.a;
    }
}

/* Source-over in 8-bit integers: out = src*a + dst*(1-a), alpha likewise, rounded. */
static void blend(uint8_t *p, render_rgba col)
{
    if (col.a == 255) {
        p[0] = col.r;
        p[1] = col.g;
        p[2] = col.b;
        p[3] = 255;
        return;
    }
    unsigned a = col.a, na = 255u - a;
    p[0] = (uint8_t)((col.r * a + p[0] * na + 127u) / 255u);
    p[1] = (uint8_t)((col.g * a + p[1] * na + 127u) / 255u);
    p[2] = (uint8_t)((col.b * a + p[2] * na + 127u) / 255u);
    p[3] = (uint8_t)(a + (p[3] * na + 127u) / 255u);
}

void render_canvas_dot(render_canvas *c, int x, int y, render_rgba col)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return;
    blend(c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 4, col);
}

void render_canvas_fill(render_canvas *c, int x, int y, int w, int h,
                            render_rgba col)
{
    int x1 = x + w, y1 = y + h;
    if (x < 0)
        x = 0;
    if (y < 0)
        y = 0;
    if (x1 > c->w)
        x1 = c->w;
    if (y1 > c->h)
        y1 = c->h;
    for (int yy = y; yy < y1; yy++) {
        uint8_t *row = c->px + (size_t)yy * (size_t)c->w * 4;
        for (int xx = x; xx < x1; xx++)
            blend(row + (size_t)xx * 4, col);
    }
}

void render_canvas_frame(render_canvas *c, int x, int y, int w, int h,
                             render_rgba col)
{
    if (w <= 0 || h <= 0)
        return;
    render_canvas_fill(c, x, y, w, 1, col);
    if (h > 1)
        render_canvas_fill(c, x, y + h - 1, w, 1, col);
    if (h > 2) {
        render_canvas_fill(c, x, y + 1, 1, h - 2, col);
        if (w > 1)
            render_canvas_fill(c, x + w - 1, y + 1, 1, h - 2, col);
    }
}

void render_canvas_line(render_canvas *c, int x0, int y0, int x1, int y1,
                            render_rgba col)
{
    int dx = abs(x1 - x0), dy = -abs(y1 - y0);
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int e = dx + dy;
    for (;;) {
        render_canvas_dot(c, x0, y0, col);
        if (x0 == x1 && y0 == y1)
            break;
        int e2 = 2 * e;
        if (e2 >= dy) {
            e += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            e += dx;
            y0 += sy;
        }
    }
}
