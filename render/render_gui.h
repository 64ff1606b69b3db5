/* render_gui.h - the live viewer (`horizon gui`): an SDL2 window that shows the simulation as it
 * runs, with a HUD, help, inspect panel, live plot, snapshots and frame recording. The picture
 * comes from the same frame composition as exported PNGs (sim_compose, or its host rule
 * render_frame_compose on a published host copy), so a snapshot of a fitted view equals the frame
 * `horizon run` writes.
 * Built only when SDL2 is found. */
#ifndef RENDER_GUI_H
#define RENDER_GUI_H

#include <stdint.h>

#include "sim.h"

/* Defaults for the window when the caller gives no size. */
#define RENDER_GUI_DEFAULT_W 1280
#define RENDER_GUI_DEFAULT_H 800

typedef struct render_gui_config {
    const sim_scenario *sc;      /* after overrides; output.dir receives snapshots/recordings */
    const char *title;           /* shown in the window title (the scenario's name) */
    const sim_backend_ops *ops;
    int threads;                 /* CPU threads (0: all) */
    int width, height;           /* window size in pixels (0: default) */
    const char *script;          /* --script FILE, or NULL for interactive use */
    int64_t bench_frames;        /* > 0: draw this many frames unthrottled, print frames/s, quit */
    int paused;                  /* start paused (a script always starts paused) */
    int steps_per_frame;         /* 1 .. 1024 (any, not only powers of two), or 0 for "max" */
    int no_session;              /* do not record the session (render_gui_session.h) */
} render_gui_config;

/* Opens the window and runs until the user (or the script) quits. Prints the step reached and
 * the mean frames/s on stdout at the end. Returns SIM_OK, SIM_EINVAL (bad script: message in
 * err, nothing opened), SIM_EIO (no display, snapshot not written), or the simulation's
 * failure status. */
int render_gui_run(const render_gui_config *cfg, sim_err *err);

#endif
