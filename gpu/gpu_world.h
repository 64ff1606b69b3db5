/* gpu_world.h - the initial world of sim_world_init (sim_world.c) built on the device, for the
 * CUDA backend's create_fresh: the same field and agent cells, bit for bit, without a host
 * shuffle and an upload of the whole world. Internal to gpu/ (C++). */
#ifndef GPU_WORLD_H
#define GPU_WORLD_H

#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "sim_scenario.h"
#include "sim_status.h"
}

/* field[i] = sim_initial_cell of cell i, for every cell of sc's world. */
int gpu_world_field(const sim_scenario *sc, float *field, cudaStream_t s, sim_err *err);

/* Random placement: the first n steps of the placement shuffle (stream 0) over all `cells`
 * cells, so that cand[0 .. n) are the agents' cells of sim_world_init (cand: cells entries).
 * Scratch: on the device resv (cells entries), win (2n), part (n) and d_count (one word), and
 * h_count (one pinned word) for the rounds' read-backs. Queued on s; returns after the last
 * round's read-back (the serial tail may still run). */
int gpu_world_place(unsigned long long seed, int64_t cells, int64_t n, uint32_t *cand,
                    uint32_t *resv, uint32_t *win, uint32_t *part, unsigned long long *d_count,
                    unsigned long long *h_count, cudaStream_t s, sim_err *err);

#endif
