/* gpu_horizon_sell.cuh - the block routines of the SELL-C-sigma tile mapping (GPU_MAP_SELL, seed
 * 004) of the tile-sum kernel (gpu_horizon.cu). Included by gpu_horizon.cu (CUDA C++; device
 * code).
 *
 * Why: a block of the other mappings serves one tile's agents GPU_HZ_THREADS at a time, and with
 * 256 threads about half the large scenario's tiles (~256 agents) took a second, nearly empty
 * round. The sliced ELLPACK format's answer, with tiles as rows and agents as entries (measured
 * 7.9% slower than the dynamic queue with 320-thread blocks, gpu/BENCH.md round 7: kept as an
 * alternative, not the default):
 *   gpu_hz_block_sell_order  sorts the tiles of a window of GPU_HZ_SELL_SIGMA consecutive tiles
 *                            by agent count (descending, ties by tile index), one block per
 *                            window, into the launch's slice order;
 *   gpu_hz_block_next_slice  takes the next slice (GPU_HZ_SELL_C consecutive entries of that
 *                            order, tiles of similar counts) from the atomic queue;
 *   gpu_hz_block_load_slice  loads the slice's regions side by side in shared memory;
 *   gpu_hz_slice_items       names item j of the slice's concatenated agents for
 *                            gpu_hz_block_serve_items, which serves them in full rounds.
 * Each agent's sums come from its own tile's region by the routines of the other mappings, so the
 * results are the same bits whatever the mapping. Sparse mode only: a dense table per tile would
 * multiply the shared memory too (gpu_hz_plan_make falls back to the dynamic mapping).
 * Shared memory of a block: dynamic C regions of RS*PW uint32 (gpu_hz_plan.smem); static as the
 * tile kernel's plus a gpu_hz_slice (~100 B). */
#ifndef GPU_HORIZON_SELL_CUH
#define GPU_HORIZON_SELL_CUH

#include <stdint.h>

#include "gpu_horizon_block.cuh"
#include "gpu_policy.h"

#if GPU_HZ_SELL_SIGMA > 1024 || GPU_HZ_SELL_C < 1 || GPU_HZ_SELL_C > 32
#error "GPU_HZ_SELL_SIGMA: one block ranks a window (<= 1024); GPU_HZ_SELL_C: lanes of a warp"
#endif

/* The slice a block serves, in shared memory: its number (>= the slice count: none left) and
 * for each of its C tiles the tile, its first agent in tile order and its agent count (0 for a
 * tile past the last one). */
typedef struct gpu_hz_slice {
    unsigned index;
    gpu_hz_tile t[GPU_HZ_SELL_C];
    uint32_t b0[GPU_HZ_SELL_C];
    uint32_t n[GPU_HZ_SELL_C];
} gpu_hz_slice;

/* Slices of a tiling: C consecutive entries of the slice order, the last one possibly short. */
__host__ __device__ __forceinline__ int gpu_hz_sell_slices(int ntiles)
{
    return (ntiles + GPU_HZ_SELL_C - 1) / GPU_HZ_SELL_C;
}

/* Window blockIdx.x of the tiles (SIGMA consecutive ones, the last window possibly short) in
 * slice order: order[w0 + rank] = tile w0 + i, where rank counts the window's tiles that hold
 * more agents than tile i, or as many and come before it (a total order: every rank is taken
 * once, whatever the timing). Thread i ranks tile i against the counts in shared memory (each
 * read a broadcast; SIGMA^2 compares a window, nothing next to the tile kernel). Requires
 * blockDim.x == GPU_HZ_SELL_SIGMA; counts: shared, SIGMA entries. */
__device__ __forceinline__ void gpu_hz_block_sell_order(const uint32_t *begin, int ntiles,
                                                        uint32_t *order, uint32_t *counts)
{
    const int w0 = (int)blockIdx.x * GPU_HZ_SELL_SIGMA, i = (int)threadIdx.x;
    const int m = min(GPU_HZ_SELL_SIGMA, ntiles - w0);
    const uint32_t mine = i < m ? begin[w0 + i + 1] - begin[w0 + i] : 0u;
    counts[i] = mine;
    __syncthreads();
    if (i >= m)
        return;
    int rank = 0;
    for (int j = 0; j < m; j++) {
        const uint32_t o = counts[j];
        rank += o > mine || (o == mine && j < i);
    }
    order[w0 + rank] = (uint32_t)(w0 + i);
}

/* Takes the next slice from the queue into s: lane 0 of warp 0 draws its number, lane k < C
 * describes its tile k, and the barrier at the end publishes s; returns the slice number (the
 * queue's count, so past the last slice when none is left). Every thread calls it; the caller
 * has synced since s was last read. */
__device__ __forceinline__ unsigned gpu_hz_block_next_slice(gpu_hz_slice &s,
                                                            const gpu_hz_geom &g,
                                                            const uint32_t *order,
                                                            const uint32_t *begin,
                                                            unsigned *queue)
{
    if (threadIdx.x < 32) {
        const int lane = (int)threadIdx.x;
        unsigned k = 0;
        if (lane == 0)
            k = atomicAdd(queue, 1u);
        k = __shfl_sync(0xffffffffu, k, 0);
        const int64_t e = (int64_t)k * GPU_HZ_SELL_C + lane;
        if (lane == 0)
            s.index = k;
        if (lane < GPU_HZ_SELL_C) {
            uint32_t b0 = 0, n = 0;
            int tile = 0;
            if (e < g.ntiles) {
                tile = (int)order[e];
                b0 = begin[tile];
                n = begin[tile + 1] - b0;
            }
            s.t[lane] = gpu_hz_tile_at(g, tile);
            s.b0[lane] = b0;
            s.n[lane] = n;
        }
    }
    __syncthreads();
    return s.index;
}

/* Agents of the slice, all its tiles together. */
__device__ __forceinline__ uint32_t gpu_hz_slice_agents(const gpu_hz_slice &s)
{
    uint32_t total = 0;
#pragma unroll
    for (int k = 0; k < GPU_HZ_SELL_C; k++)
        total += s.n[k];
    return total;
}

/* Loads the prefix rows of the slice's tiles that hold agents, tile k's region at I + k*RS*PW
 * (every warp loads rows of each region in turn, see load_rows), and returns after one barrier
 * for them all. NC: see region_group. */
template <bool SMALL, bool NC = true>
__device__ __forceinline__ void gpu_hz_block_load_slice(uint32_t *I, const gpu_hz_geom &g,
                                                        const float *field,
                                                        const gpu_hz_slice &s)
{
#pragma unroll
    for (int k = 0; k < GPU_HZ_SELL_C; k++)
        if (s.n[k] > 0)
            load_prefix<SMALL, NC>(I + k * g.RS * g.PW, g, field, s.t[k].ox, s.t[k].oy);
    __syncthreads();
}

/* Item j of the slice's agents (those of tile 0, then those of tile 1, ...) for
 * gpu_hz_block_serve_items: tile k is the first whose running count passes j; its agent
 * j - (agents before tile k) in tile order; its region at word k*RS*PW. */
struct gpu_hz_slice_items {
    const gpu_hz_slice *s;
    int region_words; /* RS * PW */
    __device__ __forceinline__ gpu_hz_item operator()(uint32_t j) const
    {
        int k = 0;
#pragma unroll
        for (int i = 0; i + 1 < GPU_HZ_SELL_C; i++)
            if (k == i && j >= s->n[i]) {
                j -= s->n[i];
                k = i + 1;
            }
        gpu_hz_item it;
        it.q = s->b0[k] + j;
        it.at = k * region_words;
        it.t = s->t[k];
        return it;
    }
};

#endif
