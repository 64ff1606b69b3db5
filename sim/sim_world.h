/* sim_world.h - the initial state of a scenario: field values and agent placement, generated on
 * the host from the seed with the counter-based generator, so every backend starts identically. */
#ifndef SIM_WORLD_H
#define SIM_WORLD_H

#include <stdint.h>

#include "sim_scenario.h"
#include "sim_status.h"

/* Fills field (width*height) and agents (sim_scenario_agent_count cells, distinct), the field
 * with `threads` OpenMP threads (0: all; the values do not depend on it). */
int sim_world_init(const sim_scenario *sc, int threads, float *field, uint32_t *agents,
                   sim_err *err);

/* Checks a state: every agent cell inside the grid and no cell holding two agents.
 * SIM_EINVAL with the first offending agent otherwise. */
int sim_world_check_agents(const sim_scenario *sc, const uint32_t *agents, int64_t n,
                           sim_err *err);

#endif
