/* gpu_bins.h - agents binned by tile: a stable radix sort of (tile key, agent id) and the run of
 * each tile in the sorted order, so that one thread block serves one tile's agents with
 * coalesced loads. Internal to gpu/ (C++). */
#ifndef GPU_BINS_H
#define GPU_BINS_H

#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "sim_status.h"
}

struct gpu_hz_geom;

/* Tile keys and agent ids before and after sorting, tile run starts (ntiles + 1) and CUB's
 * scratch, sized once for `cap` agents. */
typedef struct gpu_bins {
    uint32_t *d_key_in, *d_key_out, *d_id_in, *d_id_out, *d_begin;
    void *d_temp;
    size_t temp_bytes;
    int64_t cap;
    int ntiles, key_bits;
} gpu_bins;

/* Bytes gpu_bins_alloc takes for cap agents (CUB's scratch queried from the library). */
size_t gpu_bins_bytes(int64_t cap, int ntiles);
/* Allocates b for cap agents (device memory through gpu_alloc.h). On failure (SIM_EDEVMEM, ...)
 * what was allocated stays in b: call gpu_bins_free in every case. gpu_bins_free on a zeroed
 * or freed b is a no-op. */
int gpu_bins_alloc(gpu_bins *b, int64_t cap, int ntiles, sim_err *err);
void gpu_bins_free(gpu_bins *b);

/* Sorts the n cells (device, indexed by agent/query id) by tile: d_id_out lists the ids tile by
 * tile, d_begin[t] .. d_begin[t+1] is tile t's run. Stable, so the order is deterministic. */
int gpu_bins_build(gpu_bins *b, const struct gpu_hz_geom *g, const uint32_t *d_cells, int64_t n,
                   cudaStream_t s, sim_err *err);

#endif
