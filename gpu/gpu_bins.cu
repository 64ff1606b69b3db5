/* gpu_bins.cu - agents binned by tile (see gpu_bins.h), both ways:
 *   - sorted bins: tile keys, a stable CUB radix sort of (key, id) pairs, and the run start of
 *     every tile from block adjacent differences of the sorted keys (seed 002). Deterministic:
 *     the sort is stable and every run start is written once.
 *   - the step's bins: a count of agents per tile with warp-aggregated atomics (agents arrive in
 *     tile order, so a warp touches one or two tiles) that notes each agent's rank in its tile,
 *     a one-block scan of the counts into run starts, and a scatter of ids and cells into the
 *     other set. Cheaper than a sort: an agent moves at most one cell a step, so its tile
 *     rarely changes. */
#include <cub/block/block_adjacent_difference.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <string.h>

#include "gpu_alloc.h"
#include "gpu_bins.h"
#include "gpu_check.h"
#include "gpu_horizon.h"
#include "gpu_pdl.cuh"
#include "gpu_policy.h"

gpu_bins_geom gpu_bins_geom_of(const gpu_hz_geom *g)
{
    gpu_bins_geom b;
    b.w = g->w;
    b.T = g->T;
    b.ntx = g->ntx;
    b.ntiles = g->ntiles;
    return b;
}

/* ---- Sorted bins ---- */

/* Thread per agent: its tile key and its id. */
__global__ void gpu_bins_keys_kernel(const uint32_t *__restrict__ cells, int64_t n,
                                     gpu_bins_geom bg, uint32_t *__restrict__ keys,
                                     uint32_t *__restrict__ ids)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    keys[i] = gpu_bins_tile_of(cells[i], bg);
    ids[i] = (uint32_t)i;
}

typedef cub::BlockAdjacentDifference<uint32_t, GPU_BIN_THREADS> bin_adj;

struct key_step {
    __device__ uint32_t operator()(uint32_t cur, uint32_t prev) const
    {
        return cur - prev;
    }
};

/* Run starts of the sorted keys: where key[i] - key[i-1] > 0 (a block adjacent difference,
 * seed 002), tiles key[i-1]+1 .. key[i] start at i. Index n carries the sentinel key ntiles,
 * which closes the last run: begin[ntiles] = n. Every begin entry is written exactly once. */
__global__ void __launch_bounds__(GPU_BIN_THREADS)
gpu_bins_starts_kernel(const uint32_t *__restrict__ keys, int64_t n, int ntiles, uint32_t *begin)
{
    __shared__ typename bin_adj::TempStorage tmp;
    const int64_t base = (int64_t)blockIdx.x * GPU_BIN_THREADS * GPU_BIN_ITEMS;
    uint32_t k[GPU_BIN_ITEMS], d[GPU_BIN_ITEMS];
#pragma unroll
    for (int j = 0; j < GPU_BIN_ITEMS; j++) {
        int64_t i = base + (int64_t)threadIdx.x * GPU_BIN_ITEMS + j;
        k[j] = i < n ? keys[i] : (uint32_t)ntiles;
    }
    uint32_t pred = base > 0 ? keys[base - 1] : 0u;
    bin_adj(tmp).SubtractLeft(k, d, key_step(), pred);
#pragma unroll
    for (int j = 0; j < GPU_BIN_ITEMS; j++) {
        int64_t i = base + (int64_t)threadIdx.x * GPU_BIN_ITEMS + j;
        if (i > n)
            continue;
        int64_t first = i == 0 ? 0 : (int64_t)(k[j] - d[j]) + 1;
        for (int64_t t = first; t <= (int64_t)k[j]; t++)
            begin[t] = (uint32_t)i;
    }
}

size_t gpu_bins_bytes(int64_t cap, int ntiles)
{
    size_t temp = 0;
    if (cap > 0 &&
        cub::DeviceRadixSort::SortPairs(NULL, temp, (const uint32_t *)NULL, (uint32_t *)NULL,
                                        (const uint32_t *)NULL, (uint32_t *)NULL, (int)cap, 0,
                                        32) != cudaSuccess)
        temp = (size_t)cap * 8 + (1u << 20); /* no device to ask: a generous bound */
    return (size_t)cap * 4 * sizeof(uint32_t) + (2 * (size_t)ntiles + 1) * sizeof(uint32_t) +
           temp;
}

int gpu_bins_alloc(gpu_bins *b, int64_t cap, int ntiles, sim_err *err)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
    b->ntiles = ntiles;
    b->key_bits = 1;
    while ((1ll << b->key_bits) < (long long)ntiles)
        b->key_bits++;
    if (cap <= 0)
        return SIM_OK;
    size_t n4 = (size_t)cap * sizeof(uint32_t);
    /* On failure the blocks taken so far stay in *b for gpu_bins_free. */
    GPU_TRY(gpu_alloc_device((void **)&b->d_key_in, n4, "bin keys", err));
    GPU_TRY(gpu_alloc_device((void **)&b->d_key_out, n4, "bin keys", err));
    GPU_TRY(gpu_alloc_device((void **)&b->d_id_in, n4, "bin ids", err));
    GPU_TRY(gpu_alloc_device((void **)&b->d_id_out, n4, "bin ids", err));
    GPU_TRY(gpu_alloc_device((void **)&b->d_begin, ((size_t)ntiles + 1) * sizeof(uint32_t),
                             "bin starts", err));
    GPU_TRY(gpu_alloc_device((void **)&b->d_order, (size_t)ntiles * sizeof(uint32_t),
                             "tile order", err));
    GPU_CHECK(err, cub::DeviceRadixSort::SortPairs(NULL, b->temp_bytes, b->d_key_in, b->d_key_out,
                                                   b->d_id_in, b->d_id_out, (int)cap, 0,
                                                   b->key_bits));
    GPU_TRY(gpu_alloc_device(&b->d_temp, b->temp_bytes, "bin sort scratch", err));
    return SIM_OK;
}

void gpu_bins_free(gpu_bins *b)
{
    gpu_alloc_free(b->d_key_in);
    gpu_alloc_free(b->d_key_out);
    gpu_alloc_free(b->d_id_in);
    gpu_alloc_free(b->d_id_out);
    gpu_alloc_free(b->d_begin);
    gpu_alloc_free(b->d_order);
    gpu_alloc_free(b->d_temp);
    memset(b, 0, sizeof *b);
}

int gpu_bins_build(gpu_bins *b, const gpu_hz_geom *g, const uint32_t *d_cells, int64_t n,
                   cudaStream_t s, sim_err *err)
{
    if (n <= 0 || n > b->cap)
        return sim_err_set(err, SIM_EINVAL, "binning %lld agents with room for %lld",
                           (long long)n, (long long)b->cap);
    unsigned blocks = (unsigned)((n + GPU_BIN_THREADS - 1) / GPU_BIN_THREADS);
    gpu_bins_keys_kernel<<<blocks, GPU_BIN_THREADS, 0, s>>>(d_cells, n, gpu_bins_geom_of(g),
                                                           b->d_key_in, b->d_id_in);
    GPU_CHECK_LAUNCH(err, s);
    size_t temp = b->temp_bytes;
    GPU_CHECK(err, cub::DeviceRadixSort::SortPairs(b->d_temp, temp, b->d_key_in, b->d_key_out,
                                                   b->d_id_in, b->d_id_out, (int)n, 0,
                                                   b->key_bits, s));
    const int64_t per = (int64_t)GPU_BIN_THREADS * GPU_BIN_ITEMS;
    unsigned sblocks = (unsigned)((n + 1 + per - 1) / per); /* n + 1 items: the sentinel too */
    gpu_bins_starts_kernel<<<sblocks, GPU_BIN_THREADS, 0, s>>>(b->d_key_out, n, g->ntiles,
                                                               b->d_begin);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}


/* ---- The step's bins ---- */

/* Counts agents q with final cells fin[q] into their tiles (create, and the bench's binning
 * part; in the step the move kernel does it). */
__global__ void __launch_bounds__(GPU_EW_THREADS)
gpu_bins_count_kernel(int64_t n, const uint32_t *__restrict__ fin, gpu_bins_geom bg,
                      uint32_t *count, uint32_t *rank)
{
    const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = q < n;
    const uint32_t c = live ? fin[q] : 0u;
    gpu_bins_count_warp(live, gpu_bins_tile_of(c, bg), count, rank, q);
}

/* One block of GPU_BIN_SCAN_THREADS threads (gpu_bins_scan_block), GPU_BIN_SCAN_ITEMS tiles a
 * thread in a round: 4096 tiles a round. */
typedef cub::BlockScan<uint32_t, GPU_BIN_SCAN_THREADS> bin_scan_t;

__global__ void __launch_bounds__(GPU_BIN_SCAN_THREADS)
gpu_bins_scan_kernel(uint32_t *count, int ntiles, uint32_t *begin, unsigned long long *step)
{
    __shared__ typename bin_scan_t::TempStorage tmp;
    gpu_pdl_wait(); /* the move kernel's counts (gpu_pdl.cuh) */
    gpu_pdl_release();
    gpu_bins_scan_block<GPU_BIN_SCAN_THREADS, GPU_BIN_SCAN_ITEMS>(count, ntiles, begin, step, tmp);
}

/* Thread per agent q of the old order (gpu_bins_scatter_one). ids NULL: the old order is the id
 * order (create). */
__global__ void __launch_bounds__(GPU_EW_THREADS)
gpu_bins_scatter_kernel(int64_t n, const uint32_t *__restrict__ ids,
                        const uint32_t *__restrict__ fin, const uint32_t *__restrict__ rank,
                        const uint32_t *__restrict__ begin, gpu_bins_geom bg,
                        uint32_t *__restrict__ ids_out, uint32_t *__restrict__ cells_out)
{
    gpu_pdl_wait(); /* the scan's run starts (gpu_pdl.cuh) */
    gpu_pdl_release();
    const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (q < n)
        gpu_bins_scatter_one(ids ? ids[q] : (uint32_t)q, fin[q], rank[q], begin, bg, n, ids_out,
                             cells_out);
}

static unsigned ew_blocks(int64_t n)
{
    return (unsigned)((n + GPU_EW_THREADS - 1) / GPU_EW_THREADS);
}

size_t gpu_bins_agents_bytes(int64_t n, int ntiles)
{
    const size_t na = (size_t)(n > 0 ? n : 1), nt = (size_t)ntiles;
    /* ids and cells of both sets and the rank, per agent; two sets of starts, the count and the
     * slice order, per tile. */
    return na * 5 * sizeof(uint32_t) + (2 * (nt + 1) + 2 * nt) * sizeof(uint32_t);
}

/* gpu_alloc_device, counting the bytes taken into *bytes. */
static int take(void **p, size_t n, size_t *bytes, sim_err *err)
{
    GPU_TRY(gpu_alloc_device(p, n, "agent bins", err));
    *bytes += n ? n : 1;
    return SIM_OK;
}

int gpu_bins_agents_alloc(gpu_bins_agents *b, int64_t n, int ntiles, size_t *bytes,
                          sim_err *err)
{
    const size_t na = (size_t)(n > 0 ? n : 1), nt = (size_t)ntiles;
    for (int k = 0; k < 2; k++) {
        GPU_TRY(take((void **)&b->ids[k], na * sizeof(uint32_t), bytes, err));
        GPU_TRY(take((void **)&b->cells[k], na * sizeof(uint32_t), bytes, err));
        GPU_TRY(take((void **)&b->begin[k], (nt + 1) * sizeof(uint32_t), bytes, err));
    }
    GPU_TRY(take((void **)&b->count, nt * sizeof(uint32_t), bytes, err));
    GPU_TRY(take((void **)&b->rank, na * sizeof(uint32_t), bytes, err));
    GPU_TRY(take((void **)&b->order, nt * sizeof(uint32_t), bytes, err));
    return SIM_OK;
}

void gpu_bins_agents_free(gpu_bins_agents *b)
{
    for (int k = 0; k < 2; k++) {
        gpu_alloc_free(b->ids[k]);
        gpu_alloc_free(b->cells[k]);
        gpu_alloc_free(b->begin[k]);
    }
    gpu_alloc_free(b->count);
    gpu_alloc_free(b->rank);
    gpu_alloc_free(b->order);
    memset(b, 0, sizeof *b);
}

int gpu_bins_agents_count(gpu_bins_agents *b, const gpu_hz_geom *g, const uint32_t *d_final,
                          int64_t n, cudaStream_t s, sim_err *err)
{
    if (n <= 0)
        return SIM_OK;
    gpu_bins_count_kernel<<<ew_blocks(n), GPU_EW_THREADS, 0, s>>>(n, d_final, gpu_bins_geom_of(g),
                                                                  b->count, b->rank);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

int gpu_bins_agents_scan(gpu_bins_agents *b, const gpu_hz_geom *g, int to,
                         unsigned long long *d_step, int pdl, cudaStream_t s, sim_err *err)
{
    GPU_CHECK(err, gpu_launch(pdl, gpu_bins_scan_kernel, 1, GPU_BIN_SCAN_THREADS, 0, s, b->count,
                              g->ntiles, b->begin[to], d_step));
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

int gpu_bins_agents_rebin(gpu_bins_agents *b, const gpu_hz_geom *g, int from,
                          const uint32_t *d_final, int64_t n, unsigned long long *d_step,
                          int pdl, cudaStream_t s, sim_err *err)
{
    const int to = from ^ 1;
    GPU_TRY(gpu_bins_agents_scan(b, g, to, d_step, pdl, s, err));
    GPU_CHECK(err, gpu_launch(pdl, gpu_bins_scatter_kernel, ew_blocks(n), GPU_EW_THREADS, 0, s, n,
                              (const uint32_t *)b->ids[from], d_final,
                              (const uint32_t *)b->rank, (const uint32_t *)b->begin[to],
                              gpu_bins_geom_of(g), b->ids[to], b->cells[to]));
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

int gpu_bins_agents_init(gpu_bins_agents *b, const gpu_hz_geom *g, const uint32_t *d_cells,
                         int64_t n, cudaStream_t s, sim_err *err)
{
    b->cur = 0;
    if (n <= 0)
        return SIM_OK;
    const gpu_bins_geom bg = gpu_bins_geom_of(g);
    GPU_CHECK(err, cudaMemsetAsync(b->count, 0, (size_t)g->ntiles * sizeof(uint32_t), s));
    /* Set 0 from the agents in id order. */
    gpu_bins_count_kernel<<<ew_blocks(n), GPU_EW_THREADS, 0, s>>>(n, d_cells, bg, b->count,
                                                                  b->rank);
    GPU_CHECK_LAUNCH(err, s);
    gpu_bins_scan_kernel<<<1, GPU_BIN_SCAN_THREADS, 0, s>>>(b->count, g->ntiles, b->begin[0],
                                                             NULL);
    GPU_CHECK_LAUNCH(err, s);
    gpu_bins_scatter_kernel<<<ew_blocks(n), GPU_EW_THREADS, 0, s>>>(
        n, NULL, d_cells, b->rank, b->begin[0], bg, b->ids[0], b->cells[0]);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}
