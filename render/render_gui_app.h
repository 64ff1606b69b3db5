/* render_gui_app.h - the viewer's state, split by concern. Only the viewer's top two layers
 * include it: render_gui.c (window, frame loop, overlays) and render_gui_control.c (what an
 * action or a script command does), and the core operations (render_gui_core.c) that both use.
 * Calls go one way: render_gui.c -> render_gui_control.c -> render_gui_core.c -> the modules
 * below them (sim link, camera, panel, record, hud, input), none of which includes this file. */
#ifndef RENDER_GUI_APP_H
#define RENDER_GUI_APP_H

#include <SDL.h>
#include <stdint.h>

#include "render_gui.h"
#include "render_gui_hud.h"
#include "render_gui_input.h"
#include "render_gui_panel.h"
#include "render_gui_plot.h"
#include "render_gui_record.h"
#include "render_gui_script.h"
#include "render_gui_sim.h"

#define RENDER_GUI_SPF_MAX 1024 /* steps per frame, above which "max" */

/* The camera and the drawing style. view.w x view.h is the composed image (the window's
 * drawable size, or the fixed --size of a script). */
typedef struct render_gui_camera {
    sim_view view;
    int fitted;     /* follow the window with a fitted view */
    int fixed_size; /* script: the view size does not follow the window */
    int cmap;
    int agent_mode; /* RENDER_GUI_AGENTS_* */
    int follow;     /* keep the selected agent in the centre */
    int legend;     /* show the colour bar */
} render_gui_camera;

/* The composed world (view-sized, no overlays) and what it shows. */
typedef struct render_gui_world {
    uint8_t *px;
    size_t cap;
    int valid;
    SDL_Texture *tex;
    int tex_w, tex_h;
    float layer_min, layer_max; /* the horizon layer's range in view */
    float field_max;            /* the field max of the state shown (the automatic range) */
    uint64_t serial, gen;
    int64_t step;
    sim_view view;
} render_gui_world;

/* What runs and how fast. */
typedef struct render_gui_pace {
    int running;
    int spf; /* steps per frame, 1 .. RENDER_GUI_SPF_MAX, 0 = max */
} render_gui_pace;

/* The inspected cell and the selected (followed) agent. */
typedef struct render_gui_pick {
    int probe_on, probe_x, probe_y;
    int64_t announced; /* the selected agent the status line last named (-1: none) */
    int brush;        /* brush radius, cells */
    int paint_x, paint_y; /* the last painted cell of a stroke */
    int panel_drag_row, panel_drag_x; /* a drag on a panel row changes its value; -1: none */
} render_gui_pick;

/* The status line. */
typedef struct render_gui_status {
    char text[RENDER_GUI_SAID];
    double until;
    int failure_said;
} render_gui_status;

/* Script execution. */
typedef struct render_gui_scripting {
    render_gui_script script;
    int on, pc, wait_frames;
} render_gui_scripting;

typedef struct render_gui_app {
    const render_gui_config *cfg;
    sim_scenario sc; /* the scenario shown (seed and parameters follow changes) */
    render_gui_sim *sim;

    SDL_Window *win;
    SDL_Renderer *ren;
    render_gui_hud *hud;
    render_gui_rect params_at; /* where the parameter panel was drawn */
    int scale;                 /* font scale of the overlays */
    int show_help;

    render_gui_camera cam;
    render_gui_world world;
    render_gui_pace pace;
    render_gui_pick pick;
    render_gui_panel panel;
    render_gui_input input;
    render_gui_record rec;
    render_gui_status status;
    render_gui_scripting run;

    render_gui_plot hist;
    uint64_t hist_serial;
    unsigned plot_mask;

    double fps, fps_t0, t_start;
    int64_t fps_frames, frames;
    double t_compose, t_overlays, t_present; /* s spent per part of the frame (benchmark) */
    int quit;
    int rc; /* the status render_gui_run returns */
    sim_err err;
} render_gui_app;

#endif
