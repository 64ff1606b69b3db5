/* render_gui.c - the viewer's window and frame loop: SDL setup, composing the visible region
 * into a streaming texture, presenting. Input is in render_gui_input.c, the overlays in
 * render_gui_hud.c, snapshots and recordings in render_gui_save.c, the simulation thread in
 * render_gui_sim.c.
 *
 * Per frame: poll input (or run script commands), top up the simulation's steps, recompose the
 * world image only when a new state was published or the camera moved (w*h pixels, never the
 * whole grid), upload it, draw the overlays, present, and sleep to ~60 frames/s. */
#include "render_gui_app.h"
#include "sim_outdir.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render_colormap.h"
#include "render_frame.h"
#include "render_gui_view.h"

#define FRAME_PERIOD (1.0 / 60.0) /* s: display rate cap outside benchmarks */

double render_gui_app_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int render_gui_app_spf(const render_gui_app *a)
{
    return a->spf_level >= RENDER_GUI_SPF_LEVELS - 1 ? 0 : 1 << a->spf_level;
}

void render_gui_app_say(render_gui_app *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->status_text, sizeof a->status_text, fmt, ap);
    va_end(ap);
    a->status_until = render_gui_app_now() + 5.0;
    printf("horizon gui: %s\n", a->status_text);
    fflush(stdout);
}

void render_gui_app_fit(render_gui_app *a)
{
    render_view_fit(&a->view, a->sc.width, a->sc.height, a->view.w, a->view.h);
    a->fitted = 1;
}

void render_gui_app_set_running(render_gui_app *a, int on)
{
    a->running = on;
    if (!on)
        render_gui_sim_pause(a->sim);
    else
        render_gui_sim_free_run(a->sim, render_gui_app_spf(a) == 0);
}

void render_gui_app_resize_view(render_gui_app *a, int w, int h)
{
    if (w < 1)
        w = 1;
    if (h < 1)
        h = 1;
    if (w == a->view.w && h == a->view.h)
        return;
    if (a->fitted) {
        a->view.w = w;
        a->view.h = h;
        render_gui_app_fit(a);
    } else {
        render_gui_view_resize(&a->view, w, h);
    }
}

/* Grows the world image to the view and makes the texture match it. */
static int world_storage(render_gui_app *a)
{
    size_t need = (size_t)a->view.w * (size_t)a->view.h * 4;
    if (need > a->world_cap) {
        uint8_t *p = realloc(a->world, need);
        if (!p)
            return 0;
        a->world = p;
        a->world_cap = need;
    }
    if (!a->world_tex || a->tex_w != a->view.w || a->tex_h != a->view.h) {
        if (a->world_tex)
            SDL_DestroyTexture(a->world_tex);
        a->world_tex = SDL_CreateTexture(a->ren, SDL_PIXELFORMAT_RGBA32,
                                         SDL_TEXTUREACCESS_STREAMING, a->view.w, a->view.h);
        if (!a->world_tex)
            return 0;
        a->tex_w = a->view.w;
        a->tex_h = a->view.h;
        a->world_valid = 0;
    }
    return 1;
}

int render_gui_app_compose(render_gui_app *a)
{
    int horizon = a->view.layer == SIM_LAYER_HORIZON;
    render_gui_sim_want(a->sim, &a->view, horizon);
    if (!world_storage(a)) {
        render_gui_app_say(a, "out of memory for a %dx%d view", a->view.w, a->view.h);
        return a->world_valid;
    }
    const render_gui_frame *f = render_gui_sim_lock(a->sim);
    if (f->serial == 0) {
        render_gui_sim_unlock(a->sim);
        return 0;
    }
    int same = a->world_valid && f->serial == a->world_serial;
    if (same && f->host)
        same = memcmp(&a->world_view, &a->view, sizeof a->view) == 0;
    if (same) {
        render_gui_sim_unlock(a->sim);
        return 1;
    }
    if (f->host) {
        if (horizon) {
            sim_err err;
            if (render_gui_layer_horizon(a->layer, &a->view, f->field, f->fw, f->fh,
                                         a->sc.boundary == SIM_BOUNDARY_PERIODIC, a->sc.radius,
                                         a->world, &a->layer_min, &a->layer_max,
                                         &err) != SIM_OK) {
                render_gui_sim_unlock(a->sim);
                render_gui_app_say(a, "%s", err.msg);
                return a->world_valid;
            }
        } else {
            render_frame_compose(&a->view, f->field, f->fw, f->fh, f->occ, f->field_max,
                                 a->world);
        }
        a->world_view = a->view;
    } else if (f->image_view.w == a->view.w && f->image_view.h == a->view.h) {
        memcpy(a->world, f->image, (size_t)a->view.w * (size_t)a->view.h * 4);
        a->world_view = f->image_view;
    } else {
        /* The device image is for an older window size: keep the last picture until the
         * thread composes the new one. */
        render_gui_sim_unlock(a->sim);
        return a->world_valid;
    }
    a->world_serial = f->serial;
    a->world_step = f->step;
    a->world_gen = f->gen;
    render_gui_sim_unlock(a->sim);
    a->world_valid = 1;
    SDL_UpdateTexture(a->world_tex, NULL, a->world, a->view.w * 4);

    if (a->rec)
        render_gui_app_record_frame(a);
    return 1;
}

/* The window's drawable size, which the view follows unless the size is fixed. */
static void follow_window(render_gui_app *a)
{
    int w, h;
    if (SDL_GetRendererOutputSize(a->ren, &w, &h) != 0)
        return;
    if (!a->fixed_size)
        render_gui_app_resize_view(a, w, h);
    a->scale = a->view.w >= 1000 && a->view.h >= 600 ? 2 : 1;
}

/* Draws everything and presents. */
static void present(render_gui_app *a)
{
    double t0 = render_gui_app_now();
    SDL_SetRenderDrawColor(a->ren, 0, 0, 0, 255);
    SDL_RenderClear(a->ren);
    if (a->world_valid)
        SDL_RenderCopy(a->ren, a->world_tex, NULL, NULL);
    render_gui_app_overlays(a);
    double t1 = render_gui_app_now();
    SDL_RenderPresent(a->ren);
    a->t_overlays += t1 - t0;
    a->t_present += render_gui_app_now() - t1;
}

static int open_window(render_gui_app *a, sim_err *err)
{
    if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_EVENTS) != 0)
        return sim_err_set(err, SIM_EIO, "cannot open a window: %s (is DISPLAY set? headless "
                           "runs: horizon run)", SDL_GetError());
    /* Without a usable display SDL 2.26 falls back to its offscreen driver and would run with
     * no window until killed. A window-less driver is fine only when the user asked for it
     * (SDL_VIDEODRIVER=offscreen for scripts on a machine without X). */
    const char *driver = SDL_GetCurrentVideoDriver();
    const char *asked = getenv("SDL_VIDEODRIVER");
    if (driver && (strcmp(driver, "offscreen") == 0 || strcmp(driver, "dummy") == 0) &&
        !(asked && *asked)) {
        const char *display = getenv("DISPLAY");
        return sim_err_set(err, SIM_EIO, "cannot open a window: no usable display (%s; SDL "
                           "fell back to its '%s' driver); headless runs: horizon run "
                           "(or set SDL_VIDEODRIVER=offscreen for --script)",
                           display && *display ? "DISPLAY is set but no server answers there"
                                               : "DISPLAY is not set",
                           driver);
    }
    SDL_SetHint(SDL_HINT_RENDER_SCALE_QUALITY, "0"); /* crisp: nearest neighbour */
    int w = a->cfg->width > 0 ? a->cfg->width : RENDER_GUI_DEFAULT_W;
    int h = a->cfg->height > 0 ? a->cfg->height : RENDER_GUI_DEFAULT_H;
    char title[SIM_PATH_MAX + 32];
    snprintf(title, sizeof title, "Horizon - %s", a->cfg->title ? a->cfg->title : "scenario");
    a->win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, w, h,
                              SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    if (!a->win)
        return sim_err_set(err, SIM_EIO, "cannot open a window: %s", SDL_GetError());
    a->ren = SDL_CreateRenderer(a->win, -1, SDL_RENDERER_ACCELERATED);
    if (!a->ren)
        a->ren = SDL_CreateRenderer(a->win, -1, SDL_RENDERER_SOFTWARE);
    if (!a->ren)
        return sim_err_set(err, SIM_EIO, "cannot create a renderer: %s", SDL_GetError());
    a->view.w = w;
    a->view.h = h;
    return SIM_OK;
}

static void close_window(render_gui_app *a)
{
    render_gui_overlay *ovs[] = {&a->hud, &a->plot, &a->panel, &a->help, &a->status};
    for (size_t i = 0; i < sizeof ovs / sizeof ovs[0]; i++)
        render_gui_overlay_free(ovs[i]);
    if (a->world_tex)
        SDL_DestroyTexture(a->world_tex);
    if (a->ren)
        SDL_DestroyRenderer(a->ren);
    if (a->win)
        SDL_DestroyWindow(a->win);
    SDL_Quit();
}

/* One pass of the frame loop. */
static void frame(render_gui_app *a)
{
    SDL_Event ev;
    while (SDL_PollEvent(&ev))
        render_gui_app_event(a, &ev);
    if (a->scripted && !a->quit)
        render_gui_app_script(a);
    follow_window(a);
    if (a->running && render_gui_app_spf(a) > 0)
        render_gui_sim_top_up(a->sim, render_gui_app_spf(a));
    double t0 = render_gui_app_now();
    render_gui_app_compose(a);
    a->t_compose += render_gui_app_now() - t0;
    present(a);

    a->frames++;
    a->fps_frames++;
    double t = render_gui_app_now();
    if (t - a->fps_t0 >= 0.5) {
        a->fps = (double)a->fps_frames / (t - a->fps_t0);
        a->fps_frames = 0;
        a->fps_t0 = t;
    }
}

/* The benchmark: the given number of frames unthrottled, after a short warm-up. */
static void bench(render_gui_app *a)
{
    for (int i = 0; i < 30 && !a->quit; i++)
        frame(a);
    render_gui_sim_info info;
    render_gui_sim_info_get(a->sim, &info);
    int64_t step0 = info.step;
    double t0 = render_gui_app_now();
    a->t_compose = a->t_overlays = a->t_present = 0.0;
    int64_t n = 0;
    while (n < a->cfg->bench_frames && !a->quit) {
        frame(a);
        n++;
    }
    double dt = render_gui_app_now() - t0;
    render_gui_sim_info_get(a->sim, &info);
    int spf = render_gui_app_spf(a);
    char mode[64];
    if (!a->running)
        snprintf(mode, sizeof mode, "paused");
    else if (spf == 0)
        snprintf(mode, sizeof mode, "max steps/frame");
    else
        snprintf(mode, sizeof mode, "%d step%s/frame", spf, spf > 1 ? "s" : "");
    SDL_RendererInfo ri;
    if (SDL_GetRendererInfo(a->ren, &ri) != 0)
        ri.name = "?";
    double per = n > 0 ? 1000.0 / (double)n : 0.0;
    printf("horizon gui: bench %dx%d %s on %s: %lld frames in %.3f s = %.1f frames/s, %lld steps "
           "(%.1f steps/s); per frame: compose %.2f ms, draw %.2f ms, present %.2f ms "
           "(SDL renderer %s)\n", a->view.w, a->view.h, mode, a->cfg->ops->name, (long long)n,
           dt, dt > 0 ? (double)n / dt : 0.0, (long long)(info.step - step0),
           dt > 0 ? (double)(info.step - step0) / dt : 0.0, a->t_compose * per,
           a->t_overlays * per, a->t_present * per, ri.name);
    a->quit = 1;
}

int render_gui_run(const render_gui_config *cfg, sim_err *err)
{
    render_gui_app *a = calloc(1, sizeof *a);
    if (a)
        a->dir_lock = -1;
    if (!a)
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    a->cfg = cfg;
    a->sc = *cfg->sc;
    a->cmap = a->sc.colormap;
    a->brush = 4;
    a->stat = RENDER_GUI_STAT_MOVED;
    a->spf_level = RENDER_GUI_SPF_LEVELS - 1;
    if (cfg->steps_per_frame > 0)
        for (a->spf_level = 0; a->spf_level < RENDER_GUI_SPF_LEVELS - 2 &&
                               (1 << a->spf_level) < cfg->steps_per_frame;
             a->spf_level++)
            ;
    int rc = SIM_OK;
    if (cfg->script) {
        rc = render_gui_script_load(cfg->script, &a->script, err);
        if (rc != SIM_OK) {
            free(a);
            return rc == SIM_EIO ? SIM_EINVAL : rc; /* an unreadable script is bad input */
        }
        a->scripted = 1;
        a->fixed_size = 1;
    }
    render_view_init(&a->view, a->cmap, a->sc.range_max);
    if ((rc = render_gui_layer_create(&a->layer, err)) != SIM_OK)
        goto done;
    if ((rc = open_window(a, err)) != SIM_OK)
        goto done;
    render_gui_app_fit(a);
    if ((rc = render_gui_sim_create(&a->sc, cfg->ops, cfg->threads, &a->sim, err)) != SIM_OK)
        goto done;
    a->t_start = a->fps_t0 = render_gui_app_now();
    render_gui_app_set_running(a, !cfg->paused && !a->scripted);

    if (cfg->bench_frames > 0) {
        bench(a);
    } else {
        while (!a->quit) {
            double t0 = render_gui_app_now();
            frame(a);
            double left = FRAME_PERIOD - (render_gui_app_now() - t0);
            if (left > 0.001)
                SDL_WaitEventTimeout(NULL, (int)(left * 1000.0));
        }
    }
    rc = a->rc;
    if (rc != SIM_OK)
        *err = a->err;
    if (a->rec)
        render_gui_app_record_toggle(a);
    render_gui_sim_info info;
    render_gui_sim_info_get(a->sim, &info);
    double wall = render_gui_app_now() - a->t_start;
    printf("horizon gui: quit at step %lld after %lld frames (%.1f frames/s)\n",
           (long long)info.step, (long long)a->frames, wall > 0 ? (double)a->frames / wall : 0.0);
    if (rc == SIM_OK && info.failed) {
        rc = SIM_EDEVICE;
        sim_err_set(err, rc, "%s", info.msg);
    }
done:
    render_gui_sim_destroy(a->sim);
    close_window(a); /* also SDL_Quit, harmless when SDL never started */
    render_gui_layer_destroy(a->layer);
    render_gui_script_free(&a->script);
    sim_outdir_unlock(a->dir_lock);
    free(a->world);
    free(a);
    return rc;
}
