/* render_gui_hud.c - the viewer's overlays (render_gui_hud.h). */
#include "render_gui_hud.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render_font.h"
#include "render_gui_view.h"
#include "render_legend.h"

static const render_rgba panel_bg = {0, 0, 0, 215}, panel_edge = {110, 110, 110, 255},
                         ink = {240, 240, 240, 255};

/* A software-drawn panel shown through its own streaming texture (blended over the world). */
typedef struct overlay {
    uint8_t *px;
    size_t cap;
    render_canvas c;
    SDL_Texture *tex;
    int tex_w, tex_h;
    char key[4096]; /* what the texture shows (text, or a plot's serial): redraw on change */
} overlay;

struct render_gui_hud {
    SDL_Renderer *ren;
    int view_w, view_h;
    overlay ov[RENDER_GUI_OV_COUNT];
};

int render_gui_hud_create(SDL_Renderer *ren, render_gui_hud **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return 0;
    (*out)->ren = ren;
    return 1;
}

void render_gui_hud_destroy(render_gui_hud *h)
{
    if (!h)
        return;
    for (int i = 0; i < RENDER_GUI_OV_COUNT; i++) {
        if (h->ov[i].tex)
            SDL_DestroyTexture(h->ov[i].tex);
        free(h->ov[i].px);
    }
    free(h);
}

void render_gui_hud_layout(render_gui_hud *h, int view_w, int view_h)
{
    h->view_w = view_w > 0 ? view_w : 1;
    h->view_h = view_h > 0 ? view_h : 1;
}

/* View pixels -> renderer output pixels. */
static SDL_Rect to_output(const render_gui_hud *h, int x, int y, int w, int hh)
{
    int ow, oh;
    SDL_Rect r = {x, y, w, hh};
    if (SDL_GetRendererOutputSize(h->ren, &ow, &oh) == 0 && (ow != h->view_w || oh != h->view_h)) {
        r.x = x * ow / h->view_w;
        r.y = y * oh / h->view_h;
        r.w = w * ow / h->view_w;
        r.h = hh * oh / h->view_h;
    }
    return r;
}

/* Gives o a w x h canvas for content `key`. Returns 1 when the caller must draw it, 2 when the
 * texture already shows that content (nothing to draw or upload), 0 when memory is short (the
 * overlay is then skipped). Redrawing only on change keeps an idle frame cheap. */
static int begin(overlay *o, int w, int h, const char *key)
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
static void show(render_gui_hud *h, overlay *o, int x, int y, int fresh)
{
    if (fresh && (!o->tex || o->tex_w != o->c.w || o->tex_h != o->c.h)) {
        if (o->tex)
            SDL_DestroyTexture(o->tex);
        o->tex = SDL_CreateTexture(h->ren, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING,
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
    SDL_Rect r = to_output(h, x, y, o->tex_w, o->tex_h);
    SDL_RenderCopy(h->ren, o->tex, NULL, &r);
}

render_gui_rect render_gui_hud_text(render_gui_hud *h, int slot, const char *text, int x, int y,
                                    int scale, const render_rgba *cols, int n_cols)
{
    overlay *o = &h->ov[slot];
    int m = 6 * scale;
    int w = render_text_width(text, scale) + 2 * m, hh = render_text_height(text, scale) + 2 * m;
    if (x < 0)
        x = h->view_w + x - w;
    if (y < 0)
        y = h->view_h + y - hh;
    render_gui_rect where = {x, y, w, hh};
    char key[sizeof o->key];
    snprintf(key, sizeof key, "%d|%s", scale, text);
    int st = begin(o, w, hh, key);
    if (st == 0)
        return where;
    if (st == 2) {
        show(h, o, x, y, 0);
        return where;
    }
    render_canvas_clear(&o->c, panel_bg);
    render_canvas_frame(&o->c, 0, 0, w, hh, panel_edge);
    /* Line by line, so each may have its own colour. */
    char line[256];
    const char *p = text;
    for (int k = 0;; k++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, p, len);
        line[len] = '\0';
        render_text_draw(&o->c, m, m + k * RENDER_LINE * scale, line, scale,
                         k < n_cols ? cols[k] : ink);
        if (!nl)
            break;
        p = nl + 1;
    }
    show(h, o, x, y, 1);
    return where;
}

void render_gui_hud_plot(render_gui_hud *h, render_gui_plot *p, uint64_t serial,
                         unsigned mask, int x, int y, int scale)
{
    int w, hh;
    render_gui_plot_size(mask, scale, &w, &hh);
    if (w > h->view_w - 16 * scale || hh > h->view_h / 2)
        return; /* too small a window for a plot */
    if (y < 0)
        y = h->view_h + y - hh;
    char key[64];
    snprintf(key, sizeof key, "%llu|%u|%d", (unsigned long long)serial, mask, scale);
    overlay *o = &h->ov[RENDER_GUI_OV_PLOT];
    int st = begin(o, w, hh, key);
    if (st == 0)
        return;
    if (st == 1)
        render_gui_plot_draw(p, mask, &o->c, scale);
    show(h, o, x, y, st == 1);
}

void render_gui_hud_legend(render_gui_hud *h, const uint8_t *lut, double lo, double hi,
                           const char *label, int x, int y, int scale)
{
    int w, hh;
    render_legend_size(label, scale, &w, &hh);
    if (w > h->view_w / 2 || hh > h->view_h / 3)
        return;
    if (x < 0)
        x = h->view_w + x - w;
    if (y < 0)
        y = h->view_h + y - hh;
    char key[512];
    snprintf(key, sizeof key, "%d|%.9g|%.9g|%s|%u", scale, lo, hi, label,
             (unsigned)(lut[4 * 100] | lut[4 * 200 + 1] << 8 | lut[4 * 255 + 2] << 16));
    overlay *o = &h->ov[RENDER_GUI_OV_LEGEND];
    int st = begin(o, w, hh, key);
    if (st == 0)
        return;
    if (st == 1) {
        render_canvas_clear(&o->c, (render_rgba){0, 0, 0, 0});
        render_legend_draw(&o->c, 0, 0, lut, lo, hi, label, scale);
    }
    show(h, o, x, y, st == 1);
}

void render_gui_hud_cell_box(render_gui_hud *h, const sim_view *v, int cx, int cy, int min,
                             int thick, render_rgba col)
{
    int x, y, w, hh;
    render_gui_view_cell_rect(v, cx, cy, &x, &y, &w, &hh);
    if (w < min) {
        x -= (min - w) / 2;
        w = min;
    }
    if (hh < min) {
        y -= (min - hh) / 2;
        hh = min;
    }
    SDL_SetRenderDrawColor(h->ren, col.r, col.g, col.b, col.a);
    for (int k = 0; k < thick; k++) {
        SDL_Rect r = to_output(h, x - k, y - k, w + 2 * k, hh + 2 * k);
        SDL_RenderDrawRect(h->ren, &r);
    }
}

void render_gui_hud_trail(render_gui_hud *h, const sim_view *v, const int *xs, const int *ys,
                          int n, render_rgba col)
{
    SDL_SetRenderDrawBlendMode(h->ren, SDL_BLENDMODE_BLEND);
    for (int i = 1; i < n; i++) {
        if (abs(xs[i] - xs[i - 1]) > 1 || abs(ys[i] - ys[i - 1]) > 1)
            continue; /* across a periodic edge */
        int ax, ay, aw, ah, bx, by, bw, bh;
        render_gui_view_cell_rect(v, xs[i - 1], ys[i - 1], &ax, &ay, &aw, &ah);
        render_gui_view_cell_rect(v, xs[i], ys[i], &bx, &by, &bw, &bh);
        SDL_Rect a = to_output(h, ax + aw / 2, ay + ah / 2, 0, 0);
        SDL_Rect b = to_output(h, bx + bw / 2, by + bh / 2, 0, 0);
        uint8_t alpha = (uint8_t)(60 + 195 * i / (n > 1 ? n - 1 : 1));
        SDL_SetRenderDrawColor(h->ren, col.r, col.g, col.b, alpha);
        SDL_RenderDrawLine(h->ren, a.x, a.y, b.x, b.y);
    }
    SDL_SetRenderDrawBlendMode(h->ren, SDL_BLENDMODE_NONE);
}

void render_gui_hud_rate(char *buf, size_t n, double steps_per_s)
{
    if (steps_per_s > 0.0 && steps_per_s < 1.0)
        snprintf(buf, n, "%.1f s/step", 1.0 / steps_per_s);
    else
        snprintf(buf, n, "%.1f steps/s", steps_per_s);
}
