/* render_gui.c - the viewer's window and frame loop: SDL setup, the per-frame pass (input ->
 * actions, script, stepping, composing the world, overlays, present) and the benchmark. What an
 * action does is in render_gui_control.c, the world image in render_gui_core.c, the simulation
 * thread in render_gui_sim.c, the overlays' drawing in render_gui_hud.c.
 *
 * Per frame: poll input (or run script commands), top up the simulation's steps, recompose the
 * world image only when a new state was published or the camera moved (w*h pixels, never the
 * whole grid), upload it, draw the overlays, present, and sleep to ~60 frames/s. */
#include "render_gui_app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render_frame.h"
#include "render_gui_control.h"
#include "render_gui_core.h"
#include "render_legend.h"
#include "sim_outdir.h"

#define FRAME_PERIOD (1.0 / 60.0) /* s: display rate cap outside benchmarks */

static const render_rgba ink = {240, 240, 240, 255}, dim = {165, 165, 165, 255},
                         accent = {255, 200, 60, 255}, alert = {255, 80, 80, 255},
                         probe_box = {255, 60, 60, 255}, trail_col = {255, 230, 80, 255};

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
    char spf[32], be[48], rate[32], text[1536];
    if (a->pace.spf == 0)
        snprintf(spf, sizeof spf, "max steps/frame");
    else
        snprintf(spf, sizeof spf, "%d step%s/frame", a->pace.spf, a->pace.spf > 1 ? "s" : "");
    if (strcmp(a->cfg->ops->name, "cpu") == 0)
        snprintf(be, sizeof be, "cpu x%d", a->cfg->threads);
    else
        snprintf(be, sizeof be, "%s", a->cfg->ops->name);
    render_gui_hud_rate(rate, sizeof rate, info->steps_per_s);
    const char *state = info->failed ? "FAILED" : a->pace.running ? "RUNNING" : "PAUSED";
    char layer[96];
    if (a->cam.view.layer == SIM_LAYER_HORIZON)
        render_horizon_what(layer, sizeof layer, &a->sc, 0);
    else
        snprintf(layer, sizeof layer, "%s", layer_name(a->cam.view.layer));
    snprintf(text, sizeof text,
             "step %lld   %s%s\n"
             "agents %lld   %s   %.1f frames/s\n"
             "%s   %s   zoom %.0f%%\n"
             "%s   %s   agents: %s   seed %llu\n"
             "%s%s\n"
             "H: help   Tab: parameters",
             (long long)info->step, state, a->rec.q ? "   REC" : "", (long long)info->agents,
             rate, a->fps, be, spf, 100.0 / a->cam.view.scale, sim_colormap_name(a->cam.cmap),
             layer, a->cam.agent_mode == RENDER_GUI_AGENTS_MOVED ? "moved (magenta)" : "plain",
             (unsigned long long)info->seed, info->session[0] ? "recording to " : "no session",
             info->session);
    render_rgba cols[6] = {info->failed || a->rec.q ? alert : accent, ink, ink, ink, dim, dim};
    render_gui_hud_text(a->hud, RENDER_GUI_OV_HUD, text, 8 * a->scale, 8 * a->scale, a->scale,
                        cols, 6);
}

/* A horizon sum for the panel, in field units; "--" for a candidate outside the grid. */
static int fmt_sum(char *buf, size_t n, int64_t v, int best)
{
    if (v == SIM_SUM_INVALID)
        return snprintf(buf, n, "%10s ", "--");
    return snprintf(buf, n, "%10.6g%c", (double)v / (double)SIM_FIX_ONE, best ? '*' : ' ');
}

static void inspect_panel(render_gui_app *a, const render_gui_sim_info *info)
{
    render_gui_probe p;
    render_gui_sim_probe_get(a->sim, &p);
    char text[1024];
    size_t len = 0, n = sizeof text;
    int following = info->selected >= 0;
    if (following)
        len += (size_t)snprintf(text, n, "agent #%lld at (%d, %d)%s   I: close\n",
                                (long long)info->selected, info->selected_x, info->selected_y,
                                a->cam.follow ? "   following" : "   F: follow");
    else
        len += (size_t)snprintf(text, n, "cell (%d, %d)   I: close\n", a->pick.probe_x,
                                a->pick.probe_y);
    if (!p.valid || (!following && (p.x != a->pick.probe_x || p.y != a->pick.probe_y))) {
        snprintf(text + len, n - len, "...");
    } else {
        int best = 0;
        for (int c = 1; c < SIM_NCAND; c++)
            if (p.sums[c] > p.sums[best])
                best = c;
        len += (size_t)snprintf(text + len, n - len, "field %.6g at (%d, %d)\n",
                                (double)p.value, p.x, p.y);
        char what[64];
        render_horizon_what(what, sizeof what, &a->sc, 1);
        if (p.agent >= 0)
            len += (size_t)snprintf(text + len, n - len, "agent #%lld: %s\n",
                                    (long long)p.agent, what);
        else
            len += (size_t)snprintf(text + len, n - len, "no agent; what an agent would see: "
                                    "%s\n", what);
        /* The 9 candidates laid out as they sit around the cell (* marks the best). */
        for (int dy = -1; dy <= 1; dy++) {
            for (int dx = -1; dx <= 1; dx++) {
                int c;
                for (c = 0; c < SIM_NCAND; c++)
                    if (sim_cand_dx(c) == dx && sim_cand_dy(c) == dy)
                        break;
                len += (size_t)fmt_sum(text + len, n - len, p.sums[c], c == best);
            }
            len += (size_t)snprintf(text + len, n - len, "\n");
        }
        snprintf(text + len, n - len, "at step %lld", (long long)p.step);
    }
    render_rgba cols[2] = {accent, ink};
    render_gui_hud_text(a->hud, RENDER_GUI_OV_INSPECT, text, -8 * a->scale, 8 * a->scale,
                        a->scale, cols, 2);
    /* The inspected cell in red; a followed agent stands out more: a thick box in the trail's
     * colour, visible whatever the zoom. */
    if (p.valid && following)
        render_gui_hud_cell_box(a->hud, &a->cam.view, p.x, p.y, 15, 3, trail_col);
    else if (p.valid)
        render_gui_hud_cell_box(a->hud, &a->cam.view, p.x, p.y, 5, 1, probe_box);
}

/* The followed agent's recent cells as a fading line. */
static void trail(render_gui_app *a)
{
    uint32_t cells[RENDER_GUI_TRAIL];
    int xs[RENDER_GUI_TRAIL], ys[RENDER_GUI_TRAIL];
    int n = render_gui_sim_trail(a->sim, cells, RENDER_GUI_TRAIL);
    for (int i = 0; i < n; i++) {
        xs[i] = (int)(cells[i] % (uint32_t)a->sc.width);
        ys[i] = (int)(cells[i] / (uint32_t)a->sc.width);
    }
    render_gui_hud_trail(a->hud, &a->cam.view, xs, ys, n, trail_col);
}

/* The colour bar of the layer shown, with its range and the rule that set it. */
static void legend(render_gui_app *a)
{
    const sim_view *v = &a->world.view;
    char label[160];
    double lo = 0.0, hi;
    if (!a->world.valid || v->layer == SIM_LAYER_AGENTS)
        return;
    if (v->layer == SIM_LAYER_HORIZON) {
        lo = a->world.layer_min;
        hi = a->world.layer_max;
        char what[64];
        render_horizon_what(what, sizeof what, &a->sc, 0);
        render_legend_label(label, sizeof label, what, 0.0f, 1);
    } else {
        hi = v->range_max > 0.0f ? v->range_max : a->world.field_max;
        render_legend_label(label, sizeof label, "field", v->range_max, 0);
    }
    render_gui_hud_legend(a->hud, v->lut, lo, hi, label, -8 * a->scale, -8 * a->scale,
                          a->scale);
}

static void overlays(render_gui_app *a)
{
    render_gui_sim_info info;
    render_gui_sim_info_get(a->sim, &info);
    if (info.failed && !a->status.failure_said) {
        render_gui_say(a, 1, "simulation stopped: %s", info.msg);
        a->status.until = 1e300; /* a failure stays on screen */
        a->status.failure_said = 1;
    }
    if (!info.failed)
        a->status.failure_said = 0;
    if (info.note[0])
        render_gui_say(a, 1, "%s", info.note);
    render_gui_hud_layout(a->hud, a->cam.view.w, a->cam.view.h);
    if (info.selected >= 0 && info.selected != a->pick.announced)
        render_gui_say(a, 1, "following agent #%lld from (%d, %d); a pan stops following, F "
                       "follows again, I lets go", (long long)info.selected, info.selected_x,
                       info.selected_y);
    a->pick.announced = info.selected;
    if (info.selected >= 0)
        trail(a);
    hud(a, &info);
    render_gui_sim_history(a->sim, &a->hist, &a->hist_serial);
    render_gui_hud_plot(a->hud, &a->hist, a->hist_serial, a->plot_mask, 8 * a->scale,
                        -8 * a->scale, a->scale);
    if (a->pick.probe_on || info.selected >= 0)
        inspect_panel(a, &info);
    if (a->cam.legend)
        legend(a);
    if (a->panel.open) {
        char text[RENDER_GUI_PANEL_TEXT_MAX];
        render_gui_panel_text(&a->panel, &a->sc, text, sizeof text);
        render_rgba cols[1] = {accent};
        a->params_at = render_gui_hud_text(a->hud, RENDER_GUI_OV_PARAMS, text, -8 * a->scale,
                                           -60 * a->scale, a->scale, cols, 1);
    }
    if (a->show_help) {
        render_rgba cols[1] = {accent};
        int s = a->scale;
        int w = render_text_width(render_gui_control_help, s) + 12 * s;
        int h = render_text_height(render_gui_control_help, s) + 12 * s;
        render_gui_hud_text(a->hud, RENDER_GUI_OV_HELP, render_gui_control_help,
                            (a->cam.view.w - w) / 2, (a->cam.view.h - h) / 2, s, cols, 1);
    }
    if (a->status.text[0] && render_gui_now() < a->status.until) {
        int s = a->scale;
        int w = render_text_width(a->status.text, s) + 12 * s;
        render_rgba cols[1] = {ink};
        render_gui_hud_text(a->hud, RENDER_GUI_OV_STATUS, a->status.text,
                            (a->cam.view.w - w) / 2, -8 * s, s, cols, 1);
    }
}

/* The window's drawable size, which the view follows unless the size is fixed. */
static void follow_window(render_gui_app *a)
{
    int w, h;
    if (SDL_GetRendererOutputSize(a->ren, &w, &h) != 0)
        return;
    if (!a->cam.fixed_size)
        render_gui_resize_view(a, w, h);
    a->scale = a->cam.view.w >= 1000 && a->cam.view.h >= 600 ? 2 : 1;
}

/* Draws everything and presents. */
static void present(render_gui_app *a)
{
    double t0 = render_gui_now();
    SDL_SetRenderDrawColor(a->ren, 0, 0, 0, 255);
    SDL_RenderClear(a->ren);
    if (a->world.valid)
        SDL_RenderCopy(a->ren, a->world.tex, NULL, NULL);
    overlays(a);
    double t1 = render_gui_now();
    SDL_RenderPresent(a->ren);
    a->t_overlays += t1 - t0;
    a->t_present += render_gui_now() - t1;
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
    if (!render_gui_hud_create(a->ren, &a->hud))
        return sim_err_set(err, SIM_ENOMEM, "out of memory for the overlays");
    a->cam.view.w = w;
    a->cam.view.h = h;
    return SIM_OK;
}

static void close_window(render_gui_app *a)
{
    render_gui_hud_destroy(a->hud);
    if (a->world.tex)
        SDL_DestroyTexture(a->world.tex);
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
    render_gui_action act;
    while (SDL_PollEvent(&ev)) {
        int ww, wh;
        SDL_GetWindowSize(a->win, &ww, &wh);
        if (render_gui_input_event(&a->input, &ev, ww, wh, a->cam.view.w, a->cam.view.h, &act))
            render_gui_control_act(a, &act);
    }
    if (a->run.on && !a->quit)
        render_gui_control_script(a);
    follow_window(a);
    if (a->pace.running && a->pace.spf > 0)
        render_gui_sim_top_up(a->sim, a->pace.spf);
    double t0 = render_gui_now();
    render_gui_compose(a);
    a->t_compose += render_gui_now() - t0;
    present(a);

    a->frames++;
    a->fps_frames++;
    double t = render_gui_now();
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
    double t0 = render_gui_now();
    a->t_compose = a->t_overlays = a->t_present = 0.0;
    int64_t n = 0;
    while (n < a->cfg->bench_frames && !a->quit) {
        frame(a);
        n++;
    }
    double dt = render_gui_now() - t0;
    render_gui_sim_info_get(a->sim, &info);
    char mode[64];
    if (!a->pace.running)
        snprintf(mode, sizeof mode, "paused");
    else if (a->pace.spf == 0)
        snprintf(mode, sizeof mode, "max steps/frame");
    else
        snprintf(mode, sizeof mode, "%d step%s/frame", a->pace.spf, a->pace.spf > 1 ? "s" : "");
    SDL_RendererInfo ri;
    if (SDL_GetRendererInfo(a->ren, &ri) != 0)
        ri.name = "?";
    double per = n > 0 ? 1000.0 / (double)n : 0.0;
    printf("horizon gui: bench %dx%d %s on %s: %lld frames in %.3f s = %.1f frames/s, %lld steps "
           "(%.1f steps/s); per frame: compose %.2f ms, draw %.2f ms, present %.2f ms "
           "(SDL renderer %s)\n", a->cam.view.w, a->cam.view.h, mode, a->cfg->ops->name,
           (long long)n, dt, dt > 0 ? (double)n / dt : 0.0, (long long)(info.step - step0),
           dt > 0 ? (double)(info.step - step0) / dt : 0.0, a->t_compose * per,
           a->t_overlays * per, a->t_present * per, ri.name);
    a->quit = 1;
}

/* Starts recording the session (stats.csv, events.csv) under output.dir, unless asked not to
 * or the directory is another process's; the viewer runs either way. */
static render_gui_session *start_session(render_gui_app *a)
{
    if (a->cfg->no_session)
        return NULL;
    char said[RENDER_GUI_SAID];
    if (!render_gui_record_own_dir(&a->rec, said)) {
        render_gui_say(a, 1, "not recording the session: %s", said);
        return NULL;
    }
    render_gui_session *s = NULL;
    sim_err err;
    if (render_gui_session_open(a->sc.dir, &a->sc, &s, &err) != SIM_OK) {
        render_gui_say(a, 1, "not recording the session: %s", err.msg);
        return NULL;
    }
    printf("horizon gui: recording the session to %s/ (stats.csv, events.csv, scenario.ini)\n",
           render_gui_session_dir(s));
    fflush(stdout);
    return s;
}

/* The loop until quit, then the exit summary. */
static int loop(render_gui_app *a, sim_err *err)
{
    if (a->cfg->bench_frames > 0) {
        bench(a);
    } else {
        while (!a->quit) {
            double t0 = render_gui_now();
            frame(a);
            double left = FRAME_PERIOD - (render_gui_now() - t0);
            if (left > 0.001)
                SDL_WaitEventTimeout(NULL, (int)(left * 1000.0));
        }
    }
    int rc = a->rc;
    if (rc != SIM_OK)
        *err = a->err;
    char said[RENDER_GUI_SAID] = "";
    render_gui_record_close(&a->rec, said);
    if (said[0])
        printf("horizon gui: %s\n", said);
    render_gui_sim_info info;
    render_gui_sim_info_get(a->sim, &info);
    double wall = render_gui_now() - a->t_start;
    printf("horizon gui: quit at step %lld after %lld frames (%.1f frames/s)\n",
           (long long)info.step, (long long)a->frames, wall > 0 ? (double)a->frames / wall : 0.0);
    if (rc == SIM_OK && info.failed)
        rc = sim_err_set(err, SIM_EDEVICE, "%s", info.msg);
    return rc;
}

int render_gui_run(const render_gui_config *cfg, sim_err *err)
{
    if (cfg->steps_per_frame < 0 || cfg->steps_per_frame > RENDER_GUI_SPF_MAX)
        return sim_err_set(err, SIM_EINVAL, "--steps-per-frame: %d (allowed 0 .. %d)",
                           cfg->steps_per_frame, RENDER_GUI_SPF_MAX);
    render_gui_app *a = calloc(1, sizeof *a);
    if (!a)
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    a->cfg = cfg;
    a->sc = *cfg->sc;
    a->cam.cmap = a->sc.colormap;
    a->cam.legend = 1;
    a->pick.brush = 4;
    a->pick.announced = -1;
    a->pick.panel_drag_row = -1;
    a->plot_mask = render_gui_plot_next_mask(0);
    a->pace.spf = cfg->steps_per_frame; /* any value 1 .. 1024 as given, 0 = max */
    render_gui_record_init(&a->rec, a->sc.dir);
    int rc = SIM_OK;
    if (cfg->script) {
        rc = render_gui_script_load(cfg->script, &a->run.script, err);
        if (rc != SIM_OK) {
            free(a);
            return rc == SIM_EIO ? SIM_EINVAL : rc; /* an unreadable script is bad input */
        }
        a->run.on = 1;
        a->cam.fixed_size = 1;
    }
    render_view_init(&a->cam.view, a->cam.cmap, a->sc.range_max);
    if ((rc = open_window(a, err)) != SIM_OK)
        goto done;
    render_gui_fit(a);
    render_gui_session *session = start_session(a);
    if ((rc = render_gui_sim_create(&a->sc, cfg->ops, cfg->threads, session, &a->sim, err)) !=
        SIM_OK)
        goto done;
    a->t_start = a->fps_t0 = render_gui_now();
    render_gui_set_running(a, !cfg->paused && !a->run.on);
    rc = loop(a, err);
done:
    render_gui_sim_destroy(a->sim);
    close_window(a); /* also SDL_Quit, harmless when SDL never started */
    render_gui_script_free(&a->run.script);
    char said[RENDER_GUI_SAID];
    render_gui_record_close(&a->rec, said);
    free(a->world.px);
    free(a);
    return rc;
}
