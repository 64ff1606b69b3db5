/* sim.h - the simulation object: one scenario, one backend instance, the step counter.
 * The public entry point of the model for the app, the viewer and the tests. */
#ifndef SIM_H
#define SIM_H

#include <stdint.h>

#include "sim_backend.h"
#include "sim_scenario.h"
#include "sim_status.h"

typedef struct sim sim;

/* Builds the initial state of the scenario (sim_world.h) and hands it to the backend `ops`
 * (threads: CPU threads, 0 = all). On failure *out is NULL and err says why. */
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

int64_t sim_steps_done(const sim *s);
int64_t sim_agent_count(const sim *s);
const sim_scenario *sim_get_scenario(const sim *s);
const sim_backend_ops *sim_get_backend(const sim *s);
void *sim_get_backend_state(sim *s);
int sim_threads(const sim *s);          /* threads actually used by the CPU backend */
const char *sim_errmsg(const sim *s);   /* the last failure's message */

#endif
