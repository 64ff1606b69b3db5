/* render_gui_sim.h - the viewer's simulation thread: it owns the sim object, runs steps, applies
 * paint strokes and restarts between steps, and publishes what the window draws, so that the
 * event loop never waits for a step.
 *
 * Publishing: after a batch of steps (at most ~60 times a second while running freely) the
 * thread copies the state into the back half of a double buffer and swaps it to the front under
 * the lock. Two kinds of frame:
 *   host  - the field, agent occupancy and field max on the host, for render_frame_compose and
 *           the horizon layer (a backend whose sim_compose would copy the state to the host
 *           anyway: the CPU one; or any backend when the window asks for it);
 *   image - an RGBA image of the viewer's view from sim_compose, for a backend that composes
 *           itself (sim_compose_in_backend; CUDA: only the screen-sized image crosses to the
 *           host).
 * Only one copy of the grid is made per published state, never one per drawn frame. */
#ifndef RENDER_GUI_SIM_H
#define RENDER_GUI_SIM_H

#include <stdint.h>

#include "render_gui_plot.h"
#include "sim.h"

typedef struct render_gui_sim render_gui_sim;

/* The latest published state (valid while render_gui_sim_lock is held). */
typedef struct render_gui_frame {
    uint64_t serial; /* 0: nothing published yet; grows by one per publish */
    uint64_t gen;    /* restarts so far */
    int64_t step;    /* steps done in the state shown */
    int host;        /* 1: field/occ/field_max are valid; 0: image is */
    const float *field;
    const uint8_t *occ;
    int fw, fh;
    float field_max;
    const uint8_t *image; /* image_view.w * image_view.h * 4 bytes, RGBA */
    sim_view image_view;
} render_gui_frame;

/* The inspected cell, recomputed with every published state while active. */
typedef struct render_gui_probe {
    int active, valid;    /* valid: the values below describe (x, y) at `step` */
    int x, y;
    int64_t step;
    float value;          /* field at the cell */
    int64_t agent;        /* agent id on the cell, -1 for none */
    int64_t sums[SIM_NCAND]; /* horizon sums (fixed point) of an agent on the cell */
} render_gui_probe;

typedef struct render_gui_sim_info {
    int64_t step, agents, pending;
    uint64_t gen, seed;
    int free_run, failed;
    double steps_per_s;
    char msg[1024]; /* the failure, when failed */
} render_gui_sim_info;

/* Creates the simulation of sc with ops on a new thread and waits until it exists. Returns its
 * status with the message in err (nothing is left running on failure). The thread starts
 * paused: nothing steps until asked. */
int render_gui_sim_create(const sim_scenario *sc, const sim_backend_ops *ops, int threads,
                          render_gui_sim **out, sim_err *err);

/* Stops the thread (after the step in progress) and frees everything. NULL is a no-op. */
void render_gui_sim_destroy(render_gui_sim *g);

/* Asks for n more steps. */
void render_gui_sim_steps(render_gui_sim *g, int64_t n);

/* Asks for n steps unless steps are still pending: one batch per drawn frame. */
void render_gui_sim_top_up(render_gui_sim *g, int64_t n);

/* on: step continuously (publishing at display rate) until turned off. */
void render_gui_sim_free_run(render_gui_sim *g, int on);

/* Drops pending steps and stops a free run; the step in progress completes. */
void render_gui_sim_pause(render_gui_sim *g);

/* Queues a brush stroke (sim_paint) for before the next step; strokes beyond the queue's
 * capacity are merged into the last one's amount. */
void render_gui_sim_paint(render_gui_sim *g, int x, int y, int radius, float amount);

/* Rebuilds the initial state with the given seed (same scenario otherwise). */
void render_gui_sim_restart(render_gui_sim *g, uint64_t seed);

/* Starts (active) or stops inspecting cell (x, y). */
void render_gui_sim_probe(render_gui_sim *g, int active, int x, int y);

/* What to publish: `host` asks for host frames (the horizon layer needs the field) even when the
 * backend composes itself; otherwise such a backend renders `view` (the viewer's camera, colours
 * and layer) through sim_compose. A backend that does not compose itself always gets host
 * frames, whatever `host` says. */
void render_gui_sim_want(render_gui_sim *g, const sim_view *view, int host);

/* The front frame, with the lock held: release it soon with render_gui_sim_unlock (the thread
 * waits for it only to swap buffers). */
const render_gui_frame *render_gui_sim_lock(render_gui_sim *g);
void render_gui_sim_unlock(render_gui_sim *g);

void render_gui_sim_info_get(render_gui_sim *g, render_gui_sim_info *info);
void render_gui_sim_probe_get(render_gui_sim *g, render_gui_probe *probe);

/* Copies the statistics history into dst when it changed since *serial (updated); returns
 * whether it copied. */
int render_gui_sim_history(render_gui_sim *g, render_gui_plot *dst, uint64_t *serial);

/* 1 when nothing is pending (steps, strokes, restart, view) and the front frame shows the
 * current state: what a script waits for before its next command. A failed simulation counts
 * as settled. */
int render_gui_sim_settled(render_gui_sim *g);

#endif
