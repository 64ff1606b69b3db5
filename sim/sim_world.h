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

/* Step i of the placement shuffle of stream `index` (the species; 0 for the shorthand): swaps
 * cand[i] with cand[j], j = i + (Philox(seed, i, index, SIM_RNG_PLACE) words 0..1 as a 64-bit
 * number mod (n_cand - i)), and returns the chosen cell cand[i]. */
uint32_t sim_world_pick(uint64_t seed, uint32_t index, uint32_t *cand, int64_t n_cand, int64_t i);

/* Steps 0 .. n-1 of the placement shuffle of stream `index` (sim_world_pick, in this order), so
 * that cand[0 .. n) are the chosen cells and the rest of cand is as the steps leave it. With more
 * than one thread (0: all) and many steps, rounds of steps run at once (deterministic
 * reservations: a step runs when no earlier step still pending wants either of its two
 * positions), with the same result as the steps one after another; 4 B per candidate of scratch
 * while it runs (without it, the steps run in order). */
void sim_world_shuffle(uint64_t seed, uint32_t index, uint32_t *cand, int64_t n_cand, int64_t n,
                       int threads);

/* A uniform float in [0, 1) from the top 24 bits of x (exact in float): the initial noise. */
float sim_world_unit24(uint32_t x);

/* Checks a state: every agent cell inside the grid and no cell holding two agents.
 * SIM_EINVAL with the first offending agent otherwise. `threads` (0: all) for many agents. */
int sim_world_check_agents(const sim_scenario *sc, const uint32_t *agents, int64_t n,
                           int threads, sim_err *err);

#endif
