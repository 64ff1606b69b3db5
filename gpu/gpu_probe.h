/* gpu_probe.h - the viewer's reads on the device state, behind the backend table's region_sums,
 * read_cells and agent_cells (sim_backend.h; their contracts are sim.h's): the disk sums of a
 * sampled region (the horizon layer), the field and agent at some cells (the probe) and the cells
 * of some agents (following one). Only the answers cross to the host. Internal to gpu/ (C++).
 * (gpu_probe() in gpu_backend.h is another thing: it counts devices.)
 *
 * Work each expects: region sums, nx * ny threads of (2r+1) row spans, about pi r^2 loads each
 * (1920x1080 samples at r = 8: ~4e8 loads, mostly L1 hits); read_cells, n threads, plus for
 * n <= GPU_PROBE_SCAN_MAX one pass over the agents' cells (n compares each) and otherwise a
 * temporary cell -> agent map (4 B/cell, allocated and freed in the call); agent_cells, n threads.
 *
 * Memory: the queries and answers go through one device scratch block of the instance,
 * st->d_probe, grown on demand and kept until destroy (as the compose frame is), so that a viewer
 * asking every frame does not pay a cudaMalloc / cudaFree pair (both wait for the device) each
 * time. Every call ends with its stream synchronised, so the block is free again on return.
 *
 * Each function is called only with arguments sim.h checked (n >= 1, indices in range) and
 * returns SIM_OK, SIM_EDEVMEM (the scratch; bytes asked and free in err) or the CUDA failure of
 * gpu_check.h. The output arrays are host memory of the caller. */
#ifndef GPU_PROBE_H
#define GPU_PROBE_H

#include <stdint.h>

#include "gpu_state.h"

/* out[iy * nx + ix] = the disk sum of radius st->sc.radius at (xs[ix], ys[iy]): the int64 bits
 * of sim_horizon_disk, from the same sim_fix values summed in integers. */
int gpu_probe_region_sums(gpu_state *st, const int32_t *xs, int nx, const int32_t *ys, int ny,
                          int64_t *out, sim_err *err);

/* values[i] = field at cells[i]; agents[i] = the id of the agent on cells[i], or -1. */
int gpu_probe_read_cells(gpu_state *st, const uint32_t *cells, int64_t n, float *values,
                         int64_t *agents, sim_err *err);

/* cells[i] = the cell of agent ids[i]. */
int gpu_probe_agent_cells(gpu_state *st, const int64_t *ids, int64_t n, uint32_t *cells,
                          sim_err *err);

/* Frees the scratch block (destroy). */
void gpu_probe_free(gpu_state *st);

#endif
