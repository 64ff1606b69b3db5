/* render_gui_app.h - the viewer's state, shared by its parts: render_gui.c (window, frame loop,
 * composition), render_gui_save.c (snapshots, recording), render_gui_input.c (keys, mouse,
 * scripts) and render_gui_hud.c (HUD, help, inspect panel, plot, status line). Internal to the
 * viewer. */
#ifndef RENDER_GUI_APP_H
#define RENDER_GUI_APP_H

#include <SDL.h>
#include <stdint.h>

#include "render_gui.h"
#include "render_canvas.h"
#include "render_gui_layer.h"
#include "render_gui_plot.h"
#include "render_gui_script.h"
#include "render_gui_sim.h"
#include "render_queue.h"

/* Steps per frame levels: 1, 2, 4 .. 1024, then "max" (0). */
#define RENDER_GUI_SPF_LEVELS 12

/* A software-drawn panel shown through its own streaming texture (blended over the world). */
typedef struct render_gui_overlay {
    uint8_t *px;
    size_t cap;
    render_canvas c;
    SDL_Texture *tex;
    int tex_w, tex_h;
    char key[1280]; /* what the texture shows (text, or a plot's serial): redraw on change */
} render_gui_overlay;

typedef struct render_gui_app {
    const render_gui_config *cfg;
    sim_scenario sc; /* the scenario shown (its seed follows Shift+R) */
    render_gui_sim *sim;
    render_gui_layer *layer;

    SDL_Window *win;
    SDL_Renderer *ren;
    SDL_Texture *world_tex;
    int tex_w, tex_h;
    render_gui_overlay hud, plot, panel, help, status;

    /* The camera: view.w x view.h is the composed image (the window's drawable size, or the
     * fixed --size of a script). */
    sim_view view;
    int fitted;     /* follow the window with a fitted view */
    int fixed_size; /* script: the view size does not follow the window */
    int cmap;
    int scale;      /* font scale of the overlays */

    /* The composed world (view-sized, no overlays) and what it shows. */
    uint8_t *world;
    size_t world_cap;
    int world_valid;
    float layer_min, layer_max; /* the horizon layer's colour range in view */
    uint64_t world_serial, world_gen;
    int64_t world_step;
    sim_view world_view;

    render_gui_plot hist;
    uint64_t hist_serial;
    int stat;

    int running, spf_level, show_help;
    int left_down, dragging, down_x, down_y, last_x, last_y;
    int right_down, paint_x, paint_y, brush;
    int probe_on, probe_x, probe_y;

    int dir_lock; /* lock of sc.dir, taken when the session first writes there; -1: not yet */
    render_queue *rec;
    char rec_dir[SIM_PATH_MAX + 32];
    int64_t rec_index, rec_step;
    uint64_t rec_gen;
    int rec_w, rec_h;

    char status_text[SIM_PATH_MAX + 128];
    double status_until;
    int failure_said;

    double fps, fps_t0, t_start;
    int64_t fps_frames, frames;
    double t_compose, t_overlays, t_present; /* s spent per part of the frame (benchmark) */
    int quit;

    render_gui_script script;
    int pc, wait_frames, scripted;
    int rc;       /* the status run() returns */
    sim_err err;
} render_gui_app;

/* render_gui.c */
double render_gui_app_now(void);
int render_gui_app_spf(const render_gui_app *a);           /* steps per frame, 0 = max */
void render_gui_app_fit(render_gui_app *a);
void render_gui_app_set_running(render_gui_app *a, int on);
void render_gui_app_say(render_gui_app *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Brings the world image up to date with the latest frame and the camera; returns 1 when it
 * holds a picture. */
int render_gui_app_compose(render_gui_app *a);
void render_gui_app_resize_view(render_gui_app *a, int w, int h);

/* render_gui_save.c */
/* Saves the view (no overlays) to path, or to DIR/snapshot_STEP.png when path is NULL; says
 * where. Returns a sim_status. */
int render_gui_app_snapshot(render_gui_app *a, const char *path);
/* Starts recording into a fresh DIR/recording_NNN/, or stops and says how many frames. */
void render_gui_app_record_toggle(render_gui_app *a);
/* Queues the world image when it shows a state not recorded yet (a->rec must be set). Blocks
 * while the encoders are a full queue behind. */
void render_gui_app_record_frame(render_gui_app *a);

/* render_gui_input.c */
void render_gui_app_event(render_gui_app *a, const SDL_Event *ev);
void render_gui_app_key(render_gui_app *a, SDL_Keycode key, int shift);
/* Runs script commands until one must wait; sets a->quit at the end. */
void render_gui_app_script(render_gui_app *a);

/* render_gui_hud.c */
void render_gui_app_overlays(render_gui_app *a); /* draws and shows every overlay */
void render_gui_overlay_free(render_gui_overlay *o);

#endif
