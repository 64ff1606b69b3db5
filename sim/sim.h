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

/* Like sim_create_from_state, from the full state of a model world (sim_model.h): any model.
 * ops may be a single-model backend (its model engine runs a model that is not plain) or a
 * model engine. The state is checked (sim_state_check). */
int sim_create_from_model_state(const sim_scenario *sc, const sim_backend_ops *ops, int threads,
                                int64_t step, const sim_state *st, sim **out, sim_err *err);

/* The whole state into st, allocated here (sim_state_free it): fields, maps, agents with ids,
 * species, energy and age. For a single-model backend: one field, species 0, ids = indices. */
int sim_read_state(sim *s, sim_state *st);

/* The occupancy of every cell as the frames draw it (sim_view_species_code: 0 empty, 1 an agent
 * of species 0, 3.. the other species) into occ (width*height bytes). */
int sim_read_occupancy(sim *s, uint8_t *occ);

/* The scenario's model, resolved (names, counts; sim_model.h). */
const sim_model *sim_get_model(const sim *s);

void sim_destroy(sim *s); /* NULL is a no-op */

/* Advances one step; fills *st (all fields when want_stats, else step and moved). On failure the
 * message is in sim_errmsg(s) and the simulation must not be stepped again. */
int sim_step(sim *s, int want_stats, sim_stats *st);

/* Advances n steps (1 <= n <= SIM_STEP_BATCH_MAX) as n calls of sim_step would, with
 * want_stats[k] for step k of the batch (want_stats may be NULL: no statistics); out[k] (n
 * entries) gets what sim_step would have given for that step, bit for bit (step, agents and
 * moved always; the rest when wanted, else 0). The step counter advances by n. The CUDA backend
 * queues the n steps without waiting for the device in between and reads every `moved` and
 * statistic back at the end: the way to run many small steps fast. The caller decides where a
 * batch ends (a frame, a checkpoint, an event: anything that needs the state in between).
 * SIM_EINVAL (nothing stepped) for n out of range or a NULL out; on any other failure the
 * message is in sim_errmsg(s) and the simulation must not be stepped again. */
int sim_step_batch(sim *s, int n, const uint8_t *want_stats, sim_stats *out);

int sim_read_field(sim *s, float *out);      /* width*height floats */
/* sim_read_field in two halves (the backend's read_field_begin/read_wait): the begin queues a
 * copy of the current field into out and returns; sim_read_wait(s, ticket, err) returns once
 * out holds it, and may run on another thread while s steps (err: the caller's, since s's own
 * message belongs to the stepping thread). Without the backend's op, the begin reads and the
 * ticket is -1. */
int sim_read_field_begin(sim *s, float *out, int *ticket);
int sim_read_wait(sim *s, int ticket, sim_err *err);
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

/* ---- Reads for the viewer: only what is asked crosses from the backend ---- */

/* The exact fixed-point disk sums of radius sim_get_scenario(s)->radius (the value
 * sim_horizon_disk gives: periodic wraps, otherwise cells outside the grid count 0) at every cell
 * (xs[ix], ys[iy]) of a sampled region: out[iy * nx + ix]. xs strictly increasing in [0, width),
 * ys likewise in [0, height), nx, ny >= 1; otherwise SIM_EINVAL. The viewer's horizon layer. */
int sim_region_sums(sim *s, const int32_t *xs, int nx, const int32_t *ys, int ny, int64_t *out);

/* For n cells (indices y*width+x, each < width*height, else SIM_EINVAL): values[i] = the field
 * at cells[i], agents[i] = the id of the agent standing there or -1. The viewer's probe. */
int sim_read_cells(sim *s, const uint32_t *cells, int64_t n, float *values, int64_t *agents);

/* The cells of n agents by id (each in [0, sim_agent_count), else SIM_EINVAL). Following an
 * agent in the viewer. */
int sim_agent_cells(sim *s, const int64_t *ids, int64_t n, uint32_t *cells);

/* ---- Parameters changed while a simulation runs ---- */

/* Replaces the scenario's run-time parameters by those of sc: agents.noise, agents.deposit,
 * agents.radius, field.diffusion, field.sweeps and field.decay, and the noise and radius of
 * each [species.NAME] and the diffusion, sweeps and decay of each [field.NAME] (sim_events.h
 * lists a scenario's; SIM_KEYS_RUNTIME in sim_scenario.h), each checked against its range.
 * output.* and run.steps are taken from sc as they are (they never touch the state); every
 * other key, run.seed included, and the named sections themselves must equal the current
 * scenario's bit for bit: otherwise SIM_EINVAL naming the first key that differs
 * ("world.width: not a run-time parameter ...", "[species.*] sections: ..."). The agents.* keys
 * of a scenario with [species.NAME] sections, and the field.* keys of one with [field.NAME]
 * sections, must not change either (the model does not read them: "agents.noise: the
 * scenario's named sections replace this key ..."). Takes effect
 * from the next step; the state (field, agents, step count) is kept exactly, so a run that changes a
 * parameter after step k gives the same bits as one that stops at k and resumes from a
 * checkpoint with the new value. How: the state is read to host buffers and a new backend
 * instance is created from it (for a moment both instances and the host copy exist: a world
 * that barely fits may fail with SIM_EDEVMEM or SIM_ENOMEM); the old one is destroyed only then,
 * so a pointer from sim_get_backend_state is stale afterwards. On failure the simulation is
 * unchanged and still usable, and the message is in sim_errmsg(s). */
int sim_set_params(sim *s, const sim_scenario *sc);

int64_t sim_steps_done(const sim *s);
int64_t sim_agent_count(const sim *s);
const sim_scenario *sim_get_scenario(const sim *s);
const sim_backend_ops *sim_get_backend(const sim *s); /* the table, for its name */

/* A host buffer that sim_read_field or sim_read_agents fill again and again (field dumps,
 * checkpoints), made quick to copy into where the backend can (CUDA page-locks it). Returns 1
 * when it did: call sim_unpin_host(ops, p) before the buffer is freed (the simulation may be
 * gone by then); 0 when it did not (no such step on this backend, or the system refused): the
 * buffer works as before. */
int sim_pin_host(const sim_backend_ops *ops, void *p, size_t bytes);
void sim_unpin_host(const sim_backend_ops *ops, void *p);
int sim_threads(const sim *s);          /* threads actually used by the CPU backend */
const char *sim_errmsg(const sim *s);   /* the last failure's message */

#endif
