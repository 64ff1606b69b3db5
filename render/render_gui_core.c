/* render_gui_core.c - the viewer's core operations (render_gui_core.h). */
#include "render_gui_core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render_frame.h"
#include "render_gui_view.h"

double render_gui_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void render_gui_say(render_gui_app *a, int echo, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->status.text, sizeof a->status.text, fmt, ap);
    va_end(ap);
    a->status.until = render_gui_now() + 5.0;
    if (echo) {
        printf("horizon gui: %s\n", a->status.text);
        fflush(stdout);
    }
}

void render_gui_fit(render_gui_app *a)
{
    render_view_fit(&a->cam.view, a->sc.width, a->sc.height, a->cam.view.w, a->cam.view.h);
    a->cam.fitted = 1;
    a->cam.follow = 0;
}

void render_gui_set_running(render_gui_app *a, int on)
{
    a->pace.running = on;
    if (!on)
        render_gui_sim_pause(a->sim);
    else
        render_gui_sim_free_run(a->sim, a->pace.spf == 0);
}

void render_gui_resize_view(render_gui_app *a, int w, int h)
{
    sim_view *v = &a->cam.view;
    if (w < 1)
        w = 1;
    if (h < 1)
        h = 1;
    if (w == v->w && h == v->h)
        return;
    if (a->cam.fitted) {
        v->w = w;
        v->h = h;
        render_gui_fit(a);
    } else {
        render_gui_view_resize(v, w, h);
    }
}

/* Grows the world image to the view and makes the texture match it. */
static int world_storage(render_gui_app *a)
{
    render_gui_world *w = &a->world;
    const sim_view *v = &a->cam.view;
    size_t need = (size_t)v->w * (size_t)v->h * 4;
    if (need > w->cap) {
        uint8_t *p = realloc(w->px, need);
        if (!p)
            return 0;
        w->px = p;
        w->cap = need;
    }
    if (!w->tex || w->tex_w != v->w || w->tex_h != v->h) {
        if (w->tex)
            SDL_DestroyTexture(w->tex);
        w->tex = SDL_CreateTexture(a->ren, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING,
                                   v->w, v->h);
        if (!w->tex)
            return 0;
        w->tex_w = v->w;
        w->tex_h = v->h;
        w->valid = 0;
    }
    return 1;
}

/* Keeps a followed agent in the centre of the view. */
static void follow(render_gui_app *a)
{
    if (!a->cam.follow)
        return;
    render_gui_sim_info info;
    render_gui_sim_info_get(a->sim, &info);
    if (info.selected < 0)
        return;
    sim_view *v = &a->cam.view;
    double x0 = (double)info.selected_x + 0.5 - 0.5 * v->w * v->scale;
    double y0 = (double)info.selected_y + 0.5 - 0.5 * v->h * v->scale;
    if (x0 != v->x0 || y0 != v->y0) {
        v->x0 = x0;
        v->y0 = y0;
        a->cam.fitted = 0;
    }
}

int render_gui_compose(render_gui_app *a)
{
    render_gui_world *w = &a->world;
    follow(a);
    render_gui_sim_want(a->sim, &a->cam.view, a->cam.agent_mode);
    if (!world_storage(a)) {
        render_gui_say(a, 1, "out of memory for a %dx%d view", a->cam.view.w, a->cam.view.h);
        return w->valid;
    }
    const render_gui_frame *f = render_gui_sim_lock(a->sim);
    if (f->serial == 0) {
        render_gui_sim_unlock(a->sim);
        return 0;
    }
    int same = w->valid && f->serial == w->serial;
    if (same && f->host)
        same = memcmp(&w->view, &a->cam.view, sizeof a->cam.view) == 0;
    if (same) {
        render_gui_sim_unlock(a->sim);
        return 1;
    }
    if (f->host) {
        render_frame_compose(&a->cam.view, f->field, f->fw, f->fh, f->occ, f->field_max, w->px);
        w->view = a->cam.view;
        w->field_max = f->field_max;
    } else if (f->image_view.w == a->cam.view.w && f->image_view.h == a->cam.view.h) {
        memcpy(w->px, f->image, (size_t)a->cam.view.w * (size_t)a->cam.view.h * 4);
        w->view = f->image_view;
        w->layer_min = f->layer_min;
        w->layer_max = f->layer_max;
        w->field_max = f->field_max;
    } else {
        /* The image is for an older window size: keep the last picture until the thread
         * composes the new one. */
        render_gui_sim_unlock(a->sim);
        return w->valid;
    }
    w->serial = f->serial;
    w->step = f->step;
    w->gen = f->gen;
    render_gui_sim_unlock(a->sim);
    w->valid = 1;
    SDL_UpdateTexture(w->tex, NULL, w->px, a->cam.view.w * 4);

    char said[RENDER_GUI_SAID];
    if (render_gui_record_frame(&a->rec, w->px, w->view.w, w->view.h, w->step, w->gen, said))
        render_gui_say(a, 1, "%s", said);
    return 1;
}
