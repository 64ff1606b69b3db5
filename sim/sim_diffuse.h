/* sim_diffuse.h - the CPU Jacobi sweep with the three boundary kinds, and decay. */
#ifndef SIM_DIFFUSE_H
#define SIM_DIFFUSE_H

#include <stdint.h>

#include "sim_scenario.h"

/* One sweep from src into dst (both width*height). Returns max |dst - src| when want_residual,
 * else 0. Uses OpenMP over rows; the result does not depend on the thread count. */
float sim_diffuse_sweep(const sim_scenario *sc, const float *src, float *dst, int want_residual);

/* sim_diffuse_sweep on `threads` threads (<= 0: OpenMP's current default; 1 enters no parallel
 * region) and, when decay is non-zero, with the decay of sim_diffuse_decay applied to each new
 * value as it is written: dst = sweep(src) * (1 - sc->decay), the same bits as a sweep followed
 * by sim_diffuse_decay. The residual is the sweep's, before the decay. */
float sim_diffuse_sweep_ex(const sim_scenario *sc, const float *src, float *dst,
                           int want_residual, int decay, int threads);

/* Rows [y0, y1) of sim_diffuse_sweep_ex, on the calling thread (for callers that split the rows
 * among their own threads: src must be complete, every row of it, before any thread starts).
 * Returns the rows' residual (0 when !want_residual). */
float sim_diffuse_sweep_rows(const sim_scenario *sc, const float *src, float *dst, int y0,
                             int y1, int want_residual, int decay);

/* sim_diffuse_sweep_rows of the field src + deposit at every cell where occ >= 0 (the step's
 * deposit, then its first sweep, in one pass: src is not written; the deposited values, src +
 * deposit in float, are the bits a deposit pass would have written). occ: width*height agent
 * ids, -1 empty. scratch: 3 * width floats of the caller's. */
float sim_diffuse_sweep_rows_deposit(const sim_scenario *sc, const float *src,
                                     const int32_t *occ, float deposit, float *dst, int y0,
                                     int y1, float *scratch, int want_residual, int decay);

/* field *= (1 - decay), in float. */
void sim_diffuse_decay(const sim_scenario *sc, float *field);

/* sim_diffuse_decay on `threads` threads (<= 0: OpenMP's default). */
void sim_diffuse_decay_ex(const sim_scenario *sc, float *field, int threads);

#endif
