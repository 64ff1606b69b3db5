/* gpu_bins.cu - agents binned by tile (see gpu_bins.h): tile keys, a stable CUB radix sort of
 * (key, id) pairs, and the run start of every tile from block adjacent differences of the sorted
 * keys (seed 002). Deterministic: the sort is stable and every run start is written once. */
#include <cub/block/block_adjacent_difference.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <string.h>

#include "gpu_alloc.h"
#include "gpu_bins.h"
#include "gpu_check.h"
#include "gpu_horizon.h"
#include "gpu_policy.h"

/* Thread per agent: its tile key and its id. */
__global__ void hz_keys_kernel(const uint32_t *__restrict__ cells, int64_t n, int w, int T,
                               int ntx, uint32_t *__restrict__ keys, uint32_t *__restrict__ ids)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t c = cells[i];
    uint32_t x = c % (uint32_t)w, y = c / (uint32_t)w;
    keys[i] = (y / (uint32_t)T) * (uint32_t)ntx + x / (uint32_t)T;
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
hz_starts_kernel(const uint32_t *__restrict__ keys, int64_t n, int ntiles, uint32_t *begin)
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
    return (size_t)cap * 4 * sizeof(uint32_t) + ((size_t)ntiles + 1) * sizeof(uint32_t) + temp;
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
    hz_keys_kernel<<<blocks, GPU_BIN_THREADS, 0, s>>>(d_cells, n, g->w, g->T, g->ntx, b->d_key_in,
                                                     b->d_id_in);
    GPU_CHECK_LAUNCH(err, s);
    size_t temp = b->temp_bytes;
    GPU_CHECK(err, cub::DeviceRadixSort::SortPairs(b->d_temp, temp, b->d_key_in, b->d_key_out,
                                                   b->d_id_in, b->d_id_out, (int)n, 0,
                                                   b->key_bits, s));
    const int64_t per = (int64_t)GPU_BIN_THREADS * GPU_BIN_ITEMS;
    unsigned sblocks = (unsigned)((n + 1 + per - 1) / per); /* n + 1 items: the sentinel too */
    hz_starts_kernel<<<sblocks, GPU_BIN_THREADS, 0, s>>>(b->d_key_out, n, g->ntiles, b->d_begin);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

