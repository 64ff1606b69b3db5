/* render_gui_plot.c - history ring, axis scaling, labels and strip drawing of the viewer's live
 * plot (see render_gui_plot.h). */
#include "render_gui_plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render_font.h"

/* Layout, in units of `scale` pixels. */
#define PLOT_W 240      /* panel width render_gui_plot_size suggests */
#define PLOT_STRIP_H 40 /* one strip: title line, plot area, gap */
#define PLOT_PAD 4      /* margin inside the frame that nothing draws in */
#define PLOT_GAP 3      /* between strips, and between the bound labels and the plot area */
#define PLOT_MIN_W 24   /* narrower than this beside the labels: drop the labels instead */

static const render_rgba bg = {0, 0, 0, 190}, edge = {120, 120, 120, 255},
                         ink = {240, 240, 240, 255},   /* titles, messages */
                         bound = {200, 200, 200, 255}, /* the data's min and max */
                         axis = {150, 150, 150, 255};  /* the step axis */

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
    p->value[RENDER_GUI_STAT_AGENTS][at] = (double)st->agents;
}

double render_gui_plot_at(const render_gui_plot *p, int stat, int i)
{
    return p->value[stat][(p->head + i) % RENDER_GUI_PLOT_CAP];
}

int64_t render_gui_plot_step_at(const render_gui_plot *p, int i)
{
    return p->step[(p->head + i) % RENDER_GUI_PLOT_CAP];
}

const char *render_gui_stat_name(int stat)
{
    switch (stat) {
    case RENDER_GUI_STAT_MOVED: return "moved fraction";
    case RENDER_GUI_STAT_MEAN: return "field mean";
    case RENDER_GUI_STAT_MAX: return "field max";
    case RENDER_GUI_STAT_RESIDUAL: return "residual";
    case RENDER_GUI_STAT_AGENTS: return "agents";
    default: return "?";
    }
}

/* What a title falls back to when the full name does not fit. */
static const char *short_name(int stat)
{
    switch (stat) {
    case RENDER_GUI_STAT_MOVED: return "moved";
    case RENDER_GUI_STAT_MEAN: return "mean";
    case RENDER_GUI_STAT_MAX: return "max";
    case RENDER_GUI_STAT_RESIDUAL: return "resid";
    case RENDER_GUI_STAT_AGENTS: return "agents";
    default: return "?";
    }
}

render_rgba render_gui_stat_colour(int stat)
{
    /* Apart in hue and from the greys of the text, so strips and tests can tell them apart. */
    static const render_rgba cols[RENDER_GUI_STAT_COUNT] = {
        {255, 200, 60, 255},  /* moved: amber */
        {90, 200, 255, 255},  /* mean: sky blue */
        {255, 110, 110, 255}, /* max: red */
        {140, 230, 110, 255}, /* residual: green */
        {200, 150, 255, 255}, /* agents: violet */
    };
    if (stat < 0 || stat >= RENDER_GUI_STAT_COUNT)
        return ink;
    return cols[stat];
}

unsigned render_gui_plot_next_mask(unsigned mask)
{
    if (mask == RENDER_GUI_PLOT_ALL)
        return 1u << RENDER_GUI_STAT_MOVED;
    /* One statistic of the four: the next one, and after the last of them all four again. */
    for (int s = RENDER_GUI_STAT_MOVED; s < RENDER_GUI_STAT_RESIDUAL; s++)
        if (mask == 1u << s)
            return 1u << (s + 1);
    return RENDER_GUI_PLOT_ALL;
}

/* The statistics in mask, in stat order; returns how many. */
static int chosen(unsigned mask, int *stats)
{
    int m = 0;
    for (int s = 0; s < RENDER_GUI_STAT_COUNT; s++)
        if (mask & (1u << s))
            stats[m++] = s;
    return m;
}

void render_gui_plot_size(unsigned mask, int scale, int *w, int *h)
{
    int stats[RENDER_GUI_STAT_COUNT], m = chosen(mask, stats);
    if (m == 0)
        m = 1; /* room for the message */
    *w = PLOT_W * scale;
    *h = (2 * PLOT_PAD + m * PLOT_STRIP_H + RENDER_CELL_H) * scale;
}

int render_gui_plot_bounds(const double *v, int n, double *lo, double *hi)
{
    int k = 0;
    double a = INFINITY, b = -INFINITY;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) {
            k++;
            a = v[i] < a ? v[i] : a;
            b = v[i] > b ? v[i] : b;
        }
    if (k > 0) {
        *lo = a;
        *hi = b;
    }
    return k;
}

/* printf's %g writes -0 as "-0"; a statistic that is zero should read "0". */
static double unsigned_zero(double v)
{
    return v == 0.0 ? 0.0 : v;
}

int render_gui_plot_bound_labels(const render_gui_plot *p, int stat, char *hi, char *lo,
                                 size_t cap)
{
    /* Straight from the ring (p is const here; the draw path reads the same samples). */
    int k = 0;
    double a = INFINITY, b = -INFINITY;
    for (int i = 0; i < p->n; i++) {
        double v = render_gui_plot_at(p, stat, i);
        if (isfinite(v)) {
            k++;
            a = v < a ? v : a;
            b = v > b ? v : b;
        }
    }
    hi[0] = lo[0] = '\0';
    if (k == 0)
        return 0;
    snprintf(hi, cap, "%.4g", unsigned_zero(b));
    if (a == b)
        return 1; /* a flat series: one number, not the same one twice */
    snprintf(lo, cap, "%.4g", unsigned_zero(a));
    return 2;
}

/* Copies text into out if it fits max_w; otherwise its longest prefix (trailing spaces
 * dropped) followed by ".." that fits; otherwise "". Returns the width written. */
static int fit_cut(const char *text, int max_w, int scale, char *out, size_t cap)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", text);
    if (render_text_width(buf, scale) <= max_w) {
        snprintf(out, cap, "%s", buf);
        return render_text_width(out, scale);
    }
    for (size_t keep = strlen(buf); keep-- > 0;) {
        size_t k = keep;
        while (k > 0 && buf[k - 1] == ' ')
            k--;
        char cut[sizeof buf + 2];
        memcpy(cut, buf, k);
        memcpy(cut + k, "..", 3);
        if (render_text_width(cut, scale) <= max_w) {
            snprintf(out, cap, "%s", cut);
            return render_text_width(out, scale);
        }
    }
    out[0] = '\0';
    return 0;
}

int render_gui_plot_title(const render_gui_plot *p, int stat, int max_w, int scale, char *out,
                          size_t cap)
{
    static const int prec[] = {4, 3, 2};
    const char *names[2] = {render_gui_stat_name(stat), short_name(stat)};
    int have = p->n > 0 && stat >= 0 && stat < RENDER_GUI_STAT_COUNT;
    double v = have ? unsigned_zero(render_gui_plot_at(p, stat, p->n - 1)) : 0.0;
    char buf[96] = "";
    /* The name says which strip this is, so it outranks the value's last digits. */
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < (have ? 3 : 1); j++) {
            if (have)
                snprintf(buf, sizeof buf, "%s %.*g", names[k], prec[j], v);
            else
                snprintf(buf, sizeof buf, "%s", names[k]);
            if (render_text_width(buf, scale) <= max_w)
                return fit_cut(buf, max_w, scale, out, cap);
        }
    return fit_cut(buf, max_w, scale, out, cap); /* the shortest candidate, cut */
}

void render_gui_plot_range(const double *v, int n, double *lo, double *hi)
{
    double a = 0.0, b = 0.0; /* set by render_gui_plot_bounds when it finds a value */
    if (render_gui_plot_bounds(v, n, &a, &b) == 0) {
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

/* The series v[0..n) in the area [left, left+width) x [top, top+height), scaled to [lo, hi]. */
static void series(render_canvas *c, const double *v, int n, double lo, double hi, int left,
                   int top, int width, int height, render_rgba col)
{
    if (n >= width) {
        /* Column x shows samples [x*n/width, (x+1)*n/width) as a vertical min..max run, so a
         * one-step spike stays visible however many steps share the column. */
        int prev_top = -1, prev_bottom = -1; /* rows of the previous column's max and min */
        for (int x = 0; x < width; x++) {
            int i0 = (int)((int64_t)x * n / width), i1 = (int)((int64_t)(x + 1) * n / width);
            double mn, mx;
            if (render_gui_plot_bounds(v + i0, i1 - i0, &mn, &mx) == 0)
                continue;
            int r0 = render_gui_plot_row(mx, lo, hi, top, height);
            int r1 = render_gui_plot_row(mn, lo, hi, top, height);
            int t0 = r0, t1 = r1;
            /* Reach back to the previous column so a steep change stays connected. */
            if (prev_top >= 0) {
                if (r1 < prev_top)
                    r1 = prev_top;
                if (r0 > prev_bottom)
                    r0 = prev_bottom;
            }
            render_canvas_line(c, left + x, r0, left + x, r1, col);
            prev_top = t0;
            prev_bottom = t1;
        }
        return;
    }
    /* Fewer samples than columns: a polyline through the samples, the first at the left end and
     * the last at the right end (where the step axis prints their steps). */
    int px = -1, py = -1;
    for (int i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            continue;
        int x = n > 1 ? left + (int)((int64_t)i * (width - 1) / (n - 1)) : left + width - 1;
        int y = render_gui_plot_row(v[i], lo, hi, top, height);
        if (px >= 0)
            render_canvas_line(c, px, py, x, y, col);
        else
            render_canvas_dot(c, x, y, col);
        px = x;
        py = y;
    }
}

/* The step axis on row y under plot columns [x0, x1]: first step at x0, last ending at x1,
 * "step" centred between when there is room; nothing left of xmin. */
static void step_axis(render_canvas *c, const render_gui_plot *p, int x0, int x1, int xmin,
                      int y, int s)
{
    char a[32], b[32];
    snprintf(a, sizeof a, "%lld", (long long)render_gui_plot_step_at(p, 0));
    snprintf(b, sizeof b, "%lld", (long long)render_gui_plot_step_at(p, p->n - 1));
    int wa = render_text_width(a, s), wb = render_text_width(b, s);
    int xb = x1 - wb + 1, sep = RENDER_ADVANCE * s;
    if (xb < xmin)
        return; /* a cut step number would be a wrong one */
    render_text_draw(c, xb, y, b, s, axis);
    if (p->n < 2 || x0 + wa + sep > xb)
        return; /* one sample, or no room for the first step beside the last */
    render_text_draw(c, x0, y, a, s, axis);
    int ws = render_text_width("step", s), free_w = xb - (x0 + wa);
    if (free_w >= ws + 2 * sep)
        render_text_draw(c, x0 + wa + (free_w - ws) / 2, y, "step", s, axis);
}

void render_gui_plot_draw(render_gui_plot *p, unsigned mask, render_canvas *c, int scale)
{
    int s = scale < 1 ? 1 : scale;
    render_canvas_clear(c, bg);
    render_canvas_frame(c, 0, 0, c->w, c->h, edge);

    /* Everything drawn lies in the inner box [il, ir) x [pad, c->h - pad). */
    int pad = PLOT_PAD * s, il = pad, ir = c->w - pad;
    int stats[RENDER_GUI_STAT_COUNT], m = chosen(mask, stats);
    if (m == 0 || p->n == 0) {
        char msg[32];
        fit_cut(m == 0 ? "no statistic" : "no steps yet", ir - il, s, msg, sizeof msg);
        if (pad + RENDER_CELL_H * s <= c->h - pad)
            render_text_draw(c, il, pad, msg, s, ink);
        return;
    }

    /* One label column for all strips, so the plot areas share their x extent (one axis). */
    char lab[RENDER_GUI_STAT_COUNT][2][32];
    int nlab[RENDER_GUI_STAT_COUNT], lw = 0;
    for (int k = 0; k < m; k++) {
        nlab[k] = render_gui_plot_bound_labels(p, stats[k], lab[k][0], lab[k][1], 32);
        for (int j = 0; j < 2; j++) {
            int w = render_text_width(lab[k][j], s);
            lw = w > lw ? w : lw;
        }
    }
    /* The plot interior is [left, right): its frame takes columns left - 1 and right. */
    int right = ir - 1, gap = PLOT_GAP * s;
    int left = il + lw + gap + 1;
    if (lw == 0 || right - left < PLOT_MIN_W * s) {
        lw = 0; /* too narrow for labels and a plot: the plot wins */
        left = il + 1;
    }
    int width = right - left;

    int axis_y = c->h - pad - RENDER_CELL_H * s; /* the step axis row */
    int sh = (axis_y - s - pad) / m;             /* strip height */
    int n = p->n;
    double *v = p->scratch;
    for (int k = 0; k < m; k++) {
        int stat = stats[k], y0 = pad + k * sh;
        if (y0 + RENDER_CELL_H * s > axis_y)
            break; /* not even the title fits */
        char title[96];
        render_gui_plot_title(p, stat, ir - il, s, title, sizeof title);
        render_text_draw(c, il, y0, title, s, ink);

        int top = y0 + RENDER_CELL_H * s + s + 1, bottom = y0 + sh - gap, height = bottom - top;
        if (width < 2 || height < 2)
            continue;
        render_canvas_frame(c, left - 1, top - 1, width + 2, height + 2, edge);
        for (int i = 0; i < n; i++)
            v[i] = render_gui_plot_at(p, stat, i);
        double lo, hi;
        render_gui_plot_range(v, n, &lo, &hi); /* padded: only where to draw, never printed */
        series(c, v, n, lo, hi, left, top, width, height, render_gui_stat_colour(stat));

        if (lw == 0 || nlab[k] == 0)
            continue;
        int gh = RENDER_GLYPH_H * s, lx = il + lw; /* labels end at lx, right-aligned */
        if (nlab[k] == 1) {
            /* A flat series: its value beside its row. */
            double d = 0.0, e = 0.0;
            render_gui_plot_bounds(v, n, &d, &e);
            int y = render_gui_plot_row(d, lo, hi, top, height) - gh / 2;
            y = y > bottom - gh ? bottom - gh : y;
            y = y < top ? top : y;
            render_text_draw(c, lx - render_text_width(lab[k][0], s), y, lab[k][0], s, bound);
            continue;
        }
        render_text_draw(c, lx - render_text_width(lab[k][0], s), top, lab[k][0], s, bound);
        if (height >= 2 * gh + s) /* the min only where it does not overwrite the max */
            render_text_draw(c, lx - render_text_width(lab[k][1], s), bottom - gh, lab[k][1], s,
                             bound);
    }
    if (axis_y >= pad && width >= 2)
        step_axis(c, p, left - 1, right, il, axis_y, s);
}
