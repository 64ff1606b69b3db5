/* render_gui_hud.c - the viewer's overlays, drawn in software with the built-in font and shown
 * through small blended textures: the HUD (top left), the live plot (bottom left), the inspect
 * panel (top right), the help (centre) and the status line (bottom centre). */
#include "render_gui_app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render_font.h"
#include "render_gui_view.h"

static const render_rgba panel_bg = {0, 0, 0, 215}, panel_edge = {110, 110, 110, 255},
                             ink = {240, 240, 240, 255}, dim = {165, 165, 165, 255},
                             accent = {255, 200, 60, 255}, alert = {255, 80, 80, 255};

static const char help_text[] =
    "Horizon viewer - keys\n"
    "\n"
    "Space        pause / resume\n"
    "N, Right     one step\n"
    "+ / -        steps per frame (1 .. 1024, max)\n"
    "Wheel        zoom about the cursor\n"
    "Left drag    pan\n"
    "0, Home      fit the world to the window\n"
    "Left click   inspect a cell (I closes)\n"
    "Right drag   paint the field with the brush\n"
    "[ / ]        brush radius\n"
    "C            next colormap\n"
    "L            next layer\n"
    "P            next plotted statistic\n"
    "S            save a snapshot PNG of the view\n"
    "E            start / stop recording frames\n"
    "R            restart with the same seed\n"
    "Shift+R      restart with a new seed\n"
    "H, F1        this help\n"
    "Q, Esc       quit";

void render_gui_overlay_free(render_gui_overlay *o)
{
    if (o->tex)
        SDL_DestroyTexture(o->tex);
    free(o->px);
    memset(o, 0, sizeof *o);
}

/* Gives o a w x h canvas for content `key`. Returns 1 when the caller must draw it, 2 when the
 * texture already shows that content (nothing to draw or upload), 0 when memory is short (the
 * overlay is then skipped). Redrawing only on change keeps an idle frame cheap. */
static int begin(render_gui_overlay *o, int w, int h, const char *key)
{
    size_t need = (size_t)w * (size_t)h * 4;
    if (w <= 0 || h <= 0)
        return 0;
    if (o->tex && o->tex_w == w && o->tex_h == h && strcmp(o->key, key) == 0)
        return 2;
    snprintf(o->key, sizeof o->key, "%s", key);
    if (need > o->cap) {
        uint8_t *p = realloc(o->px, need);
        if (!p)
            return 0;
        o->px = p;
        o->cap = need;
    }
    o->c.px = o->px;
    o->c.w = w;
    o->c.h = h;
    return 1;
}

/* Uploads the canvas when `fresh` and draws the texture at (x, y). */
static void show(render_gui_app *a, render_gui_overlay *o, int x, int y, int fresh)
{
    if (fresh && (!o->tex || o->tex_w != o->c.w || o->tex_h != o->c.h)) {
        if (o->tex)
            SDL_DestroyTexture(o->tex);
        o->tex = SDL_CreateTexture(a->ren, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING,
                                   o->c.w, o->c.h);
        if (!o->tex)
            return;
        SDL_SetTextureBlendMode(o->tex, SDL_BLENDMODE_BLEND);
        o->tex_w = o->c.w;
        o->tex_h = o->c.h;
    }
    if (!o->tex)
        return;
    if (fresh)
        SDL_UpdateTexture(o->tex, NULL, o->c.px, o->c.w * 4);
    /* Overlays are laid out in view pixels; scale to the window's drawable. */
    int ow, oh;
    SDL_GetRendererOutputSize(a->ren, &ow, &oh);
    SDL_Rect r = {x, y, o->tex_w, o->tex_h};
    if (a->view.w > 0 && a->view.h > 0 && (ow != a->view.w || oh != a->view.h)) {
        r.x = x * ow / a->view.w;
        r.y = y * oh / a->view.h;
        r.w = o->tex_w * ow / a->view.w;
        r.h = o->tex_h * oh / a->view.h;
    }
    SDL_RenderCopy(a->ren, o->tex, NULL, &r);
}

/* A panel sized to its text, with a margin, drawn at (x, y); colours per line: line k of
 * `text` uses colours[k] when given. */
static void text_panel(render_gui_app *a, render_gui_overlay *o, const char *text, int x, int y,
                       const render_rgba *colours, int n_colours)
{
    int s = a->scale, m = 6 * s;
    int w = render_text_width(text, s) + 2 * m, h = render_text_height(text, s) + 2 * m;
    if (x < 0)
        x = a->view.w + x - w; /* negative: from the right edge */
    if (y < 0)
        y = a->view.h + y - h; /* negative: from the bottom edge */
    char key[sizeof o->key];
    snprintf(key, sizeof key, "%d|%s", s, text);
    int st = begin(o, w, h, key);
    if (st == 0)
        return;
    if (st == 2) {
        show(a, o, x, y, 0);
        return;
    }
    render_canvas_clear(&o->c, panel_bg);
    render_canvas_frame(&o->c, 0, 0, w, h, panel_edge);
    /* Line by line, so each may have its own colour. */
    char line[256];
    const char *p = text;
    for (int k = 0; *p || k == 0; k++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, p, len);
        line[len] = '\0';
        render_rgba col = k < n_colours ? colours[k] : ink;
        render_text_draw(&o->c, m, m + k * RENDER_LINE * s, line, s, col);
        if (!nl)
            break;
        p = nl + 1;
    }
    show(a, o, x, y, 1);
}

static const char *layer_name(int layer)
{
    switch (layer) {
    case SIM_LAYER_FIELD_AGENTS: return "field + agents";
    case SIM_LAYER_FIELD: return "field";
    case SIM_LAYER_AGENTS: return "agents";
    case SIM_LAYER_HORIZON: return "horizon sums";
    default: return "?";
    }
}

static void hud(render_gui_app *a, const render_gui_sim_info *info)
{
    char spf[32], be[48], text[768];
    int n = render_gui_app_spf(a);
    if (n == 0)
        snprintf(spf, sizeof spf, "max steps/frame");
    else
        snprintf(spf, sizeof spf, "%d step%s/frame", n, n > 1 ? "s" : "");
    if (strcmp(a->cfg->ops->name, "cpu") == 0)
        snprintf(be, sizeof be, "cpu x%d", a->cfg->threads);
    else
        snprintf(be, sizeof be, "%s", a->cfg->ops->name);
    const char *state = info->failed ? "FAILED" : a->running ? "RUNNING" : "PAUSED";
    char layer[96];
    if (a->view.layer == SIM_LAYER_HORIZON)
        snprintf(layer, sizeof layer, "horizon sums r=%d (%.4g .. %.4g)", a->sc.radius,
                 (double)a->layer_min, (double)a->layer_max);
    else
        snprintf(layer, sizeof layer, "%s", layer_name(a->view.layer));
    snprintf(text, sizeof text,
             "step %lld   %s%s\n"
             "agents %lld   %.1f steps/s   %.1f frames/s\n"
             "%s   %s   zoom %.0f%%\n"
             "%s   %s   seed %llu\n"
             "H: help",
             (long long)info->step, state, a->rec ? "   REC" : "", (long long)info->agents,
             info->steps_per_s, a->fps, be, spf, 100.0 / a->view.scale,
             sim_colormap_name(a->cmap), layer, (unsigned long long)info->seed);
    render_rgba cols[5] = {info->failed || a->rec ? alert : accent, ink, ink, ink, dim};
    text_panel(a, &a->hud, text, 8 * a->scale, 8 * a->scale, cols, 5);
}

/* A horizon sum for the panel, in field units; "--" for a candidate outside the grid. */
static void fmt_sum(char *buf, size_t n, int64_t v, int best)
{
    if (v == SIM_SUM_INVALID)
        snprintf(buf, n, "%10s ", "--");
    else
        snprintf(buf, n, "%10.6g%c", (double)v / (double)SIM_FIX_ONE, best ? '*' : ' ');
}

static void inspect_panel(render_gui_app *a)
{
    render_gui_probe p;
    render_gui_sim_probe_get(a->sim, &p);
    char text[1024];
    int len = snprintf(text, sizeof text, "cell (%d, %d)   I: close\n", a->probe_x, a->probe_y);
    if (!p.valid || p.x != a->probe_x || p.y != a->probe_y) {
        snprintf(text + len, sizeof text - (size_t)len, "...");
    } else {
        int best = 0;
        for (int c = 1; c < SIM_NCAND; c++)
            if (p.sums[c] > p.sums[best])
                best = c;
        len += snprintf(text + len, sizeof text - (size_t)len, "field %.6g\n", (double)p.value);
        if (p.agent >= 0)
            len += snprintf(text + len, sizeof text - (size_t)len,
                            "agent #%lld: horizon sums r=%d\n", (long long)p.agent, a->sc.radius);
        else
            len += snprintf(text + len, sizeof text - (size_t)len,
                            "no agent; sums an agent would see, r=%d\n", a->sc.radius);
        /* The 9 candidates laid out as they sit around the cell (* marks the best). */
        for (int dy = -1; dy <= 1; dy++) {
            for (int dx = -1; dx <= 1; dx++) {
                int c;
                for (c = 0; c < SIM_NCAND; c++)
                    if (sim_cand_dx(c) == dx && sim_cand_dy(c) == dy)
                        break;
                char cell[32];
                fmt_sum(cell, sizeof cell, p.sums[c], c == best);
                len += snprintf(text + len, sizeof text - (size_t)len, "%s", cell);
            }
            len += snprintf(text + len, sizeof text - (size_t)len, "\n");
        }
        snprintf(text + len, sizeof text - (size_t)len, "at step %lld", (long long)p.step);
    }
    render_rgba cols[2] = {accent, ink};
    text_panel(a, &a->panel, text, -8 * a->scale, 8 * a->scale, cols, 2);

    /* Outline the cell on the world (at least a few pixels wide when zoomed out). */
    int x, y, w, h;
    render_gui_view_cell_rect(&a->view, a->probe_x, a->probe_y, &x, &y, &w, &h);
    if (w < 5) {
        x -= (5 - w) / 2;
        w = 5;
    }
    if (h < 5) {
        y -= (5 - h) / 2;
        h = 5;
    }
    int ow, oh;
    SDL_GetRendererOutputSize(a->ren, &ow, &oh);
    SDL_Rect r = {x * ow / a->view.w, y * oh / a->view.h, w * ow / a->view.w,
                  h * oh / a->view.h};
    SDL_SetRenderDrawColor(a->ren, 255, 60, 60, 255);
    SDL_RenderDrawRect(a->ren, &r);
}

static void plot(render_gui_app *a)
{
    render_gui_sim_history(a->sim, &a->hist, &a->hist_serial);
    int s = a->scale;
    int w = 220 * s, h = 80 * s;
    if (w > a->view.w - 16 * s || h > a->view.h / 2)
        return; /* too small a window for a plot */
    char key[64];
    snprintf(key, sizeof key, "%llu|%d|%d", (unsigned long long)a->hist_serial, a->stat, s);
    int st = begin(&a->plot, w, h, key);
    if (st == 0)
        return;
    if (st == 1)
        render_gui_plot_draw(&a->hist, a->stat, &a->plot.c, s);
    show(a, &a->plot, 8 * s, a->view.h - h - 8 * s, st == 1);
}

void render_gui_app_overlays(render_gui_app *a)
{
    render_gui_sim_info info;
    render_gui_sim_info_get(a->sim, &info);
    if (info.failed && !a->failure_said) {
        render_gui_app_say(a, "simulation stopped: %s", info.msg);
        a->status_until = 1e300; /* a failure stays on screen */
        a->failure_said = 1;
    }
    if (!info.failed)
        a->failure_said = 0;
    hud(a, &info);
    plot(a);
    if (a->probe_on)
        inspect_panel(a);
    if (a->show_help) {
        render_rgba cols[1] = {accent};
        int s = a->scale;
        int w = render_text_width(help_text, s) + 12 * s;
        int h = render_text_height(help_text, s) + 12 * s;
        text_panel(a, &a->help, help_text, (a->view.w - w) / 2, (a->view.h - h) / 2, cols, 1);
    }
    if (a->status_text[0] && render_gui_app_now() < a->status_until) {
        int s = a->scale;
        int w = render_text_width(a->status_text, s) + 12 * s;
        render_rgba cols[1] = {ink};
        text_panel(a, &a->status, a->status_text, (a->view.w - w) / 2, -8 * s, cols, 1);
    }
}
