/* sim.h - the simulation object: one scenario, one backend instance, the step counter.
 * The public entry point of the model for the app, the viewer and the tests, and their only door
 * to a backend: they pick a table (sim_cpu_backend, gpu_cuda_backend) and hand it to sim_create;
 * every call into it goes through the functions below. (Backend code that needs its own instance
 * back, for tuning hooks, uses sim_impl.h.) */
#ifndef SIM_H
#define SIM_H

#include <stdint.h>

#include "sim_backend.h"
#include "sim_scenario.h"
#include "sim_status.h"

typedef struct sim sim;

/* Builds the initial state of the scenario (sim_world.h) and hands it to the backend `ops`
 * (threads: CPU threads, 0 = all). On failure *out is NULL and err says why: SIM_EINVAL for a
 * bad scenario, or for a table that is NULL, lacks a required member or was written for
 * another SIM_BACKEND_VERSION (checked before the world is built); else the backend's status. */
int sim_create(const sim_scenario *sc, const sim_backend_ops *ops, int threads, sim **out,
               sim_err *err);

/* Like sim_create, from a saved state: `step` steps already done, field (width*height) and
 * agent cells (n_agents) copied. The state is checked (cells in range, no two agents on one
 * cell) and refused with SIM_EINVAL otherwise. */
int sim_create_from_state(const sim_scenario *sc, const sim_backend_ops *ops, int threads,
                          int64_t step, const float *field, const uint32_t *agents,
                          int64_t n_agents, sim **out, sim_err *err);

void sim_destroy(sim *s); /* NULL is a no-op */

/* Advances one step; fills *st (all fields when want_stats, else step and moved). On failure the
 * message is in sim_errmsg(s) and the simulation must not be stepped again. */
int sim_step(sim *s, int want_stats, sim_stats *st);

int sim_read_field(sim *s, float *out);      /* width*height floats */
int sim_read_agents(sim *s, uint32_t *out);  /* sim_agent_count() cell indices */
int sim_checksum(sim *s, uint64_t *out);
int sim_horizon(sim *s, const uint32_t *cells, int64_t n, int64_t *sums);
int sim_paint(sim *s, int x, int y, int radius, float amount);

/* Composes the current state as seen through view (sim_view.h: size, camera, layer, colours)
 * into rgba, view->w * view->h * 4 bytes, row-major RGBA: the frames of `horizon run` and the
 * viewer's pictures. A backend with a compose op draws where the state lives (CUDA: only the
 * image crosses to the host); otherwise the field and agents are read into host buffers that s
 * owns (allocated on the first call, kept until sim_destroy) and drawn by sim_view_compose. The
 * bytes are the same either way. Only the state's layers are composed (FIELD_AGENTS, FIELD,
 * AGENTS; the horizon layer is the viewer's), and the view must have w, h >= 1, a finite
 * origin and a finite scale > 0: otherwise SIM_EINVAL. Other failures: SIM_ENOMEM (the host
 * buffers; a later call tries again) or the backend's status. The message is in sim_errmsg(s);
 * rgba is then unspecified. */
int sim_compose(sim *s, const sim_view *view, uint8_t *rgba);

/* 1 when sim_compose runs in the backend (only the image leaves it), 0 when it copies the whole
 * state to the host first. The viewer asks, to choose between publishing images and publishing
 * a host copy that the window composes itself. */
int sim_compose_in_backend(const sim *s);

int64_t sim_steps_done(const sim *s);
int64_t sim_agent_count(const sim *s);
const sim_scenario *sim_get_scenario(const sim *s);
const sim_backend_ops *sim_get_backend(const sim *s); /* the table, for its name */
int sim_threads(const sim *s);          /* threads actually used by the CPU backend */
const char *sim_errmsg(const sim *s);   /* the last failure's message */

#endif
