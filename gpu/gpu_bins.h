/* gpu_bins.h - agents binned by tile, so that one thread block serves one tile's agents with
 * coalesced loads. Two ways to the same layout (ids in tile order, the run of every tile):
 *   - gpu_bins: a stable radix sort of (tile key, id), for a set of cells given once (horizon
 *     queries, the bench's horizon section);
 *   - gpu_bins_agents: the step's own bins, kept between steps and rebuilt each step from counts
 *     and ranks (the move kernel counts agents into their new tiles with gpu_bins_count_warp,
 *     then a scan and a scatter fill the other set; see gpu_step.cu for the order).
 * Internal to gpu/ (C++): the device helpers below are for the .cu files that launch kernels. */
#ifndef GPU_BINS_H
#define GPU_BINS_H

#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "sim_status.h"
}

struct gpu_hz_geom;

/* Tile keys and agent ids before and after sorting, tile run starts (ntiles + 1), the SELL
 * mapping's slice order (ntiles, scratch of the tile-sum launch, gpu_horizon.h) and CUB's
 * scratch, sized once for `cap` agents. */
typedef struct gpu_bins {
    uint32_t *d_key_in, *d_key_out, *d_id_in, *d_id_out, *d_begin, *d_order;
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

/* Tile keys of the horizon tiling (gpu_hz_geom): tile (x / T, y / T) of a cell, row-major; the
 * fields a binning kernel needs, passed by value. */
typedef struct gpu_bins_geom {
    int w, T, ntx, ntiles;
} gpu_bins_geom;

gpu_bins_geom gpu_bins_geom_of(const struct gpu_hz_geom *g);

__device__ __forceinline__ uint32_t gpu_bins_tile_of(uint32_t c, const gpu_bins_geom &b)
{
    const uint32_t x = c % (uint32_t)b.w, y = c / (uint32_t)b.w;
    return (y / (uint32_t)b.T) * (uint32_t)b.ntx + x / (uint32_t)b.T;
}

/* Counts a warp's agents into their tiles: every lane of the warp calls it; a live lane's agent
 * q gets rank[q], its place among the agents of its tile. Lanes with the same tile share one
 * atomicAdd (their leader's), ranks follow the lane order within the warp. */
__device__ __forceinline__ void gpu_bins_count_warp(bool live, uint32_t tile, uint32_t *count,
                                                    uint32_t *rank, int64_t q)
{
    const unsigned full = 0xffffffffu;
    const unsigned peers = __match_any_sync(full, live ? tile : 0xffffffffu);
    const int lane = (int)(threadIdx.x & 31), leader = __ffs((int)peers) - 1;
    uint32_t base = 0;
    if (live && lane == leader)
        base = atomicAdd(&count[tile], (uint32_t)__popc(peers));
    base = __shfl_sync(full, base, leader);
    if (live)
        rank[q] = base + (uint32_t)__popc(peers & ((1u << lane) - 1u));
}

/* Agent q of the old order into the new bins: its slot is its tile's start plus its rank
 * (final cell fin, id `id`). Every slot below n is written once when the counts, ranks and
 * starts belong together (the check keeps an inconsistent bench state in bounds). */
__device__ __forceinline__ void gpu_bins_scatter_one(uint32_t id, uint32_t fin, uint32_t rank,
                                                     const uint32_t *begin,
                                                     const gpu_bins_geom &bg, int64_t n,
                                                     uint32_t *ids_out, uint32_t *cells_out)
{
    const uint32_t slot = begin[gpu_bins_tile_of(fin, bg)] + rank;
    if ((int64_t)slot < n) {
        ids_out[slot] = id;
        cells_out[slot] = fin;
    }
}

/* By one block of THREADS threads: begin[t] = count[0] + .. + count[t-1] (begin[ntiles] = all
 * agents), then the counts are zeroed for the next step; `step` (not NULL) advances the step
 * index. Tiles go THREADS * ITEMS at a time; tmp is CUB's BlockScan storage of the block. */
template <int THREADS, int ITEMS>
__device__ __forceinline__ void
gpu_bins_scan_block(uint32_t *count, int ntiles, uint32_t *begin, unsigned long long *step,
                    typename cub::BlockScan<uint32_t, THREADS>::TempStorage &tmp)
{
    uint32_t carry = 0;
    for (int base = 0; base < ntiles; base += THREADS * ITEMS) {
        const int i0 = base + (int)threadIdx.x * ITEMS;
        uint32_t v[ITEMS];
#pragma unroll
        for (int j = 0; j < ITEMS; j++)
            v[j] = i0 + j < ntiles ? count[i0 + j] : 0u;
        uint32_t total = 0;
        cub::BlockScan<uint32_t, THREADS>(tmp).ExclusiveSum(v, v, total);
#pragma unroll
        for (int j = 0; j < ITEMS; j++)
            if (i0 + j < ntiles) {
                begin[i0 + j] = carry + v[j];
                count[i0 + j] = 0u;
            }
        carry += total;
        __syncthreads(); /* tmp is reused */
    }
    if (threadIdx.x == 0) {
        begin[ntiles] = carry;
        if (step)
            *step += 1ull;
    }
}

/* The step's bins, between steps. Set `cur` holds this step's bins: ids[q] in tile order q,
 * their cells in the same order, and tile t's run begin[t] .. begin[t+1]. The move kernel
 * counts every agent into its new tile (count, zero between steps) and notes its rank there
 * (rank[q]); gpu_bins_agents_rebin then fills the other set, which the next step uses. The order
 * inside a tile follows the atomics: nothing depends on it (every result is a function of the
 * agent alone, claims are a maximum of unique keys). order: the SELL mapping's slice order
 * (ntiles), scratch of the tile-sum launch (one for both sets: a launch reads one set). */
typedef struct gpu_bins_agents {
    uint32_t *ids[2], *cells[2], *begin[2];
    uint32_t *count, *rank, *order;
    int cur;
} gpu_bins_agents;

/* Device bytes gpu_bins_agents_alloc takes for n agents and ntiles tiles. */
size_t gpu_bins_agents_bytes(int64_t n, int ntiles);
/* Allocates b for n agents (at least one) and ntiles tiles, adding the bytes taken to *bytes.
 * On failure (SIM_EDEVMEM, ...) what was allocated stays in b: call gpu_bins_agents_free in
 * every case; on a zeroed or freed b it is a no-op. */
int gpu_bins_agents_alloc(gpu_bins_agents *b, int64_t n, int ntiles, size_t *bytes,
                          sim_err *err);
void gpu_bins_agents_free(gpu_bins_agents *b);

/* Bins the n agents with cells d_cells (by id) into set 0, in id order within a tile (create).
 * Sets b->cur = 0. Enqueued on s. */
int gpu_bins_agents_init(gpu_bins_agents *b, const struct gpu_hz_geom *g,
                         const uint32_t *d_cells, int64_t n, cudaStream_t s, sim_err *err);

/* Counts agents q < n with final cells d_final[q] into their tiles and notes their ranks (the
 * count the move kernel does in a step; the bench's binning part runs it alone). */
int gpu_bins_agents_count(gpu_bins_agents *b, const struct gpu_hz_geom *g,
                          const uint32_t *d_final, int64_t n, cudaStream_t s, sim_err *err);

/* Next bins from the counts and ranks of the n agents in the order of set `from` (final cells
 * in d_final[q]): run starts into set from ^ 1 (zeroing the counts), then ids and cells. d_step
 * (not NULL) is advanced by one in the scan kernel. Does not change b->cur. Enqueued on s; pdl:
 * its kernels launched with programmatic dependence (gpu_pdl.cuh). */
int gpu_bins_agents_rebin(gpu_bins_agents *b, const struct gpu_hz_geom *g, int from,
                          const uint32_t *d_final, int64_t n, unsigned long long *d_step,
                          int pdl, cudaStream_t s, sim_err *err);
/* The first half of gpu_bins_agents_rebin: the run starts of set `to` from the counts (zeroing
 * them; d_step as there). The step (gpu_step.cu) scatters with its own kernel, which also takes
 * the agents' statistics; it calls gpu_bins_scatter_one for each agent as the rebin does. */
int gpu_bins_agents_scan(gpu_bins_agents *b, const struct gpu_hz_geom *g, int to,
                         unsigned long long *d_step, int pdl, cudaStream_t s, sim_err *err);

#endif
