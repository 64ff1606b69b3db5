/* render_gui_sim.h - the viewer's link to the simulation: a thread that owns the sim object, runs
 * steps, applies paint strokes, parameter changes and restarts between steps, records the
 * session (render_gui_session.h), and publishes what the window draws, so that the event loop
 * never waits for a step.
 *
 * Publishing: after a batch of steps (at most ~60 times a second while running freely) the
 * thread copies what the window needs into the back half of a double buffer and swaps it to the
 * front under the lock. Two kinds of frame:
 *   host  - the field, agent occupancy and field max on the host, composed by the window itself
 *           (a backend whose sim_compose would copy the state to the host anyway: the CPU one;
 *           or when agents are coloured by "moved", which the device compose does not draw);
 *   image - an RGBA image of the viewer's view: sim_compose where the backend composes itself
 *           (CUDA: only the screen-sized image crosses to the host), and the horizon layer on
 *           every backend (sim_region_sums for the sampled cells of the view only).
 * Only one copy of what is shown is made per published state, never one per drawn frame. The
 * inspected cell (or the followed agent) is read with sim_read_cells and sim_horizon: one cell,
 * never the grid. */
#ifndef RENDER_GUI_SIM_H
#define RENDER_GUI_SIM_H

#include <stdint.h>

#include "render_gui_plot.h"
#include "render_gui_session.h"
#include "sim.h"

typedef struct render_gui_sim render_gui_sim;

/* How agents are coloured. */
enum { RENDER_GUI_AGENTS_PLAIN = 0, RENDER_GUI_AGENTS_MOVED = 1 };
#define RENDER_GUI_AGENT_MODES 2

#define RENDER_GUI_TRAIL 256 /* cells of a followed agent's trail kept */

/* The latest published state (valid while render_gui_sim_lock is held). */
typedef struct render_gui_frame {
    uint64_t serial; /* 0: nothing published yet; grows by one per publish */
    uint64_t gen;    /* restarts and parameter changes so far */
    int64_t step;    /* steps done in the state shown */
    int host;        /* 1: field/occ/field_max are valid; 0: image is */
    const float *field;
    const uint8_t *occ; /* 1 agent, 2 agent that moved in the last step (moved colouring) */
    int fw, fh;
    float field_max;
    const uint8_t *image; /* image_view.w * image_view.h * 4 bytes, RGBA */
    sim_view image_view;
    float layer_min, layer_max; /* horizon layer image: the range of sums in view */
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
    int64_t selected;      /* followed agent id, -1 for none */
    int selected_x, selected_y; /* its cell after the latest step */
    char msg[1024];        /* the failure, when failed */
    char note[1024];       /* a message for the status line (session files), consumed once */
    char session[SIM_PATH_MAX + 32]; /* the session directory, "" when not recording */
} render_gui_sim_info;

/* Creates the simulation of sc with ops on a new thread and waits until it exists. Returns its
 * status with the message in err (nothing is left running on failure). The thread starts
 * paused: nothing steps until asked. `session` (NULL: none) receives every step's statistics
 * and every change; the thread owns it from here and closes it in render_gui_sim_destroy. */
int render_gui_sim_create(const sim_scenario *sc, const sim_backend_ops *ops, int threads,
                          render_gui_session *session, render_gui_sim **out, sim_err *err);

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
 * capacity are merged into the last one's amount. Each applied stroke is an event. */
void render_gui_sim_paint(render_gui_sim *g, int x, int y, int radius, float amount);

/* Changes the run-time parameters to those of sc (sim_set_params) before the next step; only
 * the latest of several changes queued meanwhile is applied, and each key it changes is
 * recorded as an event of the step it applies after. */
void render_gui_sim_set_params(render_gui_sim *g, const sim_scenario *sc);

/* Rebuilds the initial state with the given seed and the current parameters, and starts a new
 * session directory. */
void render_gui_sim_restart(render_gui_sim *g, uint64_t seed);

/* Starts (active) or stops inspecting cell (x, y). */
void render_gui_sim_probe(render_gui_sim *g, int active, int x, int y);

/* Inspects cell (x, y) and follows the agent standing there, if any, as soon as the thread has
 * read the cell (render_gui_sim_info tells who; the caller never waits for the read). Any
 * earlier selection is dropped at once. */
void render_gui_sim_select_at(render_gui_sim *g, int x, int y);

/* Follows agent `id` (-1: none): its cell is read after every step (sim_agent_cells) into a
 * trail, and the probe shows its cell. */
void render_gui_sim_select(render_gui_sim *g, int64_t id);

/* Copies up to cap cells of the followed agent's trail, oldest first; returns how many. */
int render_gui_sim_trail(render_gui_sim *g, uint32_t *cells, int cap);

/* What to publish: the viewer's camera, colours and layer (view) and agent colouring (mode). */
void render_gui_sim_want(render_gui_sim *g, const sim_view *view, int agent_mode);

/* The front frame, with the lock held: release it soon with render_gui_sim_unlock (the thread
 * waits for it only to swap buffers). */
const render_gui_frame *render_gui_sim_lock(render_gui_sim *g);
void render_gui_sim_unlock(render_gui_sim *g);

void render_gui_sim_info_get(render_gui_sim *g, render_gui_sim_info *info);
void render_gui_sim_probe_get(render_gui_sim *g, render_gui_probe *probe);

/* Copies the statistics history into dst when it changed since *serial (updated); returns
 * whether it copied. */
int render_gui_sim_history(render_gui_sim *g, render_gui_plot *dst, uint64_t *serial);

/* 1 when nothing is pending (steps, strokes, parameters, restart, view) and the front frame
 * shows the current state: what a script waits for before its next command. A failed
 * simulation counts as settled. */
int render_gui_sim_settled(render_gui_sim *g);

#endif
