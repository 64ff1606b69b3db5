/* sim_diffuse.h - the CPU Jacobi sweep with the three boundary kinds, and decay. */
#ifndef SIM_DIFFUSE_H
#define SIM_DIFFUSE_H

#include "sim_scenario.h"

/* One sweep from src into dst (both width*height). Returns max |dst - src| when want_residual,
 * else 0. Uses OpenMP over rows; the result does not depend on the thread count. */
float sim_diffuse_sweep(const sim_scenario *sc, const float *src, float *dst, int want_residual);

/* field *= (1 - decay), in float. */
void sim_diffuse_decay(const sim_scenario *sc, float *field);

#endif
