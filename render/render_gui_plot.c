/* render_gui_plot.c - history ring, axis scaling and drawing of the viewer's live plot. */
#include "render_gui_plot.h"

#include <math.h>
#include <stdio.h>

#include "render_font.h"

void render_gui_plot_clear(render_gui_plot *p)
{
    p->head = 0;
    p->n = 0;
}

void render_gui_plot_push(render_gui_plot *p, const sim_stats *st)
{
    int at;
    if (p->n < RENDER_GUI_PLOT_CAP) {
        at = (p->head + p->n) % RENDER_GUI_PLOT_CAP;
        p->n++;
    } else {
        at = p->head;
        p->head = (p->head + 1) % RENDER_GUI_PLOT_CAP;
    }
    p->step[at] = st->step;
    p->value[RENDER_GUI_STAT_MOVED][at] =
        st->agents > 0 ? (double)st->moved / (double)st->agents : 0.0;
    p->value[RENDER_GUI_STAT_MEAN][at] = st->field_mean;
    p->value[RENDER_GUI_STAT_MAX][at] = st->field_max;
    p->value[RENDER_GUI_STAT_RESIDUAL][at] = st->residual;
}

double render_gui_plot_at(const render_gui_plot *p, int stat, int i)
{
    return p->value[stat][(p->head + i) % RENDER_GUI_PLOT_CAP];
}

const char *render_gui_stat_name(int stat)
{
    switch (stat) {
    case RENDER_GUI_STAT_MOVED: return "moved fraction";
    case RENDER_GUI_STAT_MEAN: return "field mean";
    case RENDER_GUI_STAT_MAX: return "field max";
    case RENDER_GUI_STAT_RESIDUAL: return "residual";
    default: return "?";
    }
}

void render_gui_plot_range(const double *v, int n, double *lo, double *hi)
{
    double a = INFINITY, b = -INFINITY;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) {
            if (v[i] < a)
                a = v[i];
            if (v[i] > b)
                b = v[i];
        }
    if (a > b) {
        *lo = 0.0;
        *hi = 1.0;
        return;
    }
    double pad = (b - a) * 0.05;
    if (!(pad > 0.0)) {
        pad = fabs(a) * 0.05;
        if (pad < 1e-6)
            pad = 1e-6;
    }
    *lo = a - pad;
    *hi = b + pad;
}

int render_gui_plot_row(double v, double lo, double hi, int top, int height)
{
    if (height <= 1 || !(hi > lo))
        return top;
    double t = (hi - v) / (hi - lo); /* 0 at the top, 1 at the bottom */
    if (!(t > 0.0))
        t = 0.0; /* also NaN */
    if (t > 1.0)
        t = 1.0;
    return top + (int)lround(t * (double)(height - 1));
}

/* Compact number for labels: fixed for ordinary magnitudes, exponent otherwise. */
static void fmt(char *buf, size_t n, double v)
{
    double a = fabs(v);
    if (a != 0.0 && (a < 1e-3 || a >= 1e6))
        snprintf(buf, n, "%.3g", v);
    else
        snprintf(buf, n, "%.4g", v);
}

void render_gui_plot_draw(render_gui_plot *p, int stat, render_canvas *c, int scale)
{
    const render_rgba bg = {0, 0, 0, 190}, edge = {120, 120, 120, 255},
                          ink = {240, 240, 240, 255}, dim = {170, 170, 170, 255},
                          line = {255, 200, 60, 255};
    render_canvas_clear(c, bg);
    render_canvas_frame(c, 0, 0, c->w, c->h, edge);

    /* Layout: title line, then the plot area with the y range on its left side. */
    int pad = 4 * scale, lh = RENDER_LINE * scale;
    int top = pad + lh + 2 * scale, bottom = c->h - pad;
    int left = pad, right = c->w - pad;
    double lo = 0.0, hi = 1.0;
    int n = p->n;
    double *tmp = p->scratch;
    for (int i = 0; i < n; i++)
        tmp[i] = render_gui_plot_at(p, stat, i);
    render_gui_plot_range(tmp, n, &lo, &hi);

    char title[128], a[32], b[32];
    if (n > 0) {
        fmt(a, sizeof a, tmp[n - 1]);
        snprintf(title, sizeof title, "%s %s  (P: next)", render_gui_stat_name(stat), a);
    } else {
        snprintf(title, sizeof title, "%s: no steps yet  (P: next)", render_gui_stat_name(stat));
    }
    render_text_draw(c, pad, pad, title, scale, ink);
    fmt(a, sizeof a, hi);
    fmt(b, sizeof b, lo);
    int label_w = render_text_width(a, scale);
    int bw = render_text_width(b, scale);
    if (bw > label_w)
        label_w = bw;
    render_text_draw(c, left, top, a, scale, dim);
    render_text_draw(c, left, bottom - RENDER_GLYPH_H * scale, b, scale, dim);
    left += label_w + pad;
    int height = bottom - top, width = right - left;
    if (width < 2 || height < 2 || n == 0)
        return;
    render_canvas_frame(c, left - 1, top - 1, width + 2, height + 2, edge);

    /* Column x shows samples [x*n/width, (x+1)*n/width); with fewer samples than columns the
     * series is drawn as a polyline between sample positions. */
    if (n >= width) {
        int prev_top = -1, prev_bottom = -1; /* rows of the previous column's max and min */
        for (int x = 0; x < width; x++) {
            int i0 = (int)((int64_t)x * n / width), i1 = (int)((int64_t)(x + 1) * n / width);
            double mn = INFINITY, mx = -INFINITY;
            for (int i = i0; i < i1; i++)
                if (isfinite(tmp[i])) {
                    mn = tmp[i] < mn ? tmp[i] : mn;
                    mx = tmp[i] > mx ? tmp[i] : mx;
                }
            if (mn > mx)
                continue;
            int r0 = render_gui_plot_row(mx, lo, hi, top, height);
            int r1 = render_gui_plot_row(mn, lo, hi, top, height);
            /* Join with the previous column so a steep change stays connected. */
            if (prev_top >= 0) {
                if (r1 < prev_top)
                    r1 = prev_top;
                if (r0 > prev_bottom)
                    r0 = prev_bottom;
            }
            render_canvas_line(c, left + x, r0, left + x, r1, line);
            prev_top = render_gui_plot_row(mx, lo, hi, top, height);
            prev_bottom = render_gui_plot_row(mn, lo, hi, top, height);
        }
    } else {
        int px = -1, py = -1;
        for (int i = 0; i < n; i++) {
            if (!isfinite(tmp[i]))
                continue;
            int x = n > 1 ? left + (int)((int64_t)i * (width - 1) / (n - 1)) : left + width - 1;
            int y = render_gui_plot_row(tmp[i], lo, hi, top, height);
            if (px >= 0)
                render_canvas_line(c, px, py, x, y, line);
            else
                render_canvas_dot(c, x, y, line);
            px = x;
            py = y;
        }
    }
}
