/* gpu_probe.cu - the viewer's reads on the device (gpu_probe.h): the disk sums of a sampled
 * region, the field and agents at some cells, the cells of some agents. C++ entry points
 * (gpu_probe_*) -> dispatch (scratch layout, grid size, launch and check, copies on the
 * instance's stream) -> thin kernels, one thread per answer (or per agent, for the scan).
 *
 * Exactness: the region kernel adds the same sim_fix values (sim_rules.h, host and device) as
 * sim_horizon_region on the CPU, in integers, so the sums are the CPU's bits whatever the order.
 * It reads the field directly, O(r^2) loads per sample instead of the CPU's O(r) from prefix
 * rows: no grid-sized scratch, no block scan, little to get wrong. Predicted: a 1920x1080 region
 * at r = 8 is ~4e8 loads, mostly L1 hits (a warp's neighbours share rows), well under a
 * millisecond on an H100; r = 64 ~60x that. Measured (H100, 2048x1200 world, the whole call with
 * the 16.6 MB copy to pageable host memory, which alone is ~1.4 ms): r = 0 1.41 ms, r = 8
 * 1.47 ms, r = 16 2.63 ms, r = 33 6.3 ms, r = 64 20.7 ms (the CPU backend on 16 cores: 0.65,
 * 10.3, 22, 55, 89 ms). A prefix-row variant (a block scan per sampled row, as the CPU does) is
 * the step up if large radii need it. read_cells and agent_cells of one cell or agent take
 * 30 us and 20 us, launch and copies. */
#include <string.h>

#include "gpu_alloc.h"
#include "gpu_check.h"
#include "gpu_policy.h"
#include "gpu_probe.h"

extern "C" {
#include "sim_horizon.h"
#include "sim_rules.h"
}

/* ---- Scratch ---- */

/* Sub-arrays of the scratch block start on 256-byte boundaries (cudaMalloc's own alignment):
 * aligned for every type and for coalesced access. */
static size_t align_up(size_t bytes)
{
    return (bytes + 255) & ~(size_t)255;
}

void gpu_probe_free(gpu_state *st)
{
    if (st->d_probe) {
        gpu_alloc_free(st->d_probe);
        st->bytes -= st->probe_bytes;
    }
    st->d_probe = NULL;
    st->probe_bytes = 0;
}

/* Grows st->d_probe to at least `bytes`. Nothing in the old block is worth keeping: every call
 * ends with the stream synchronised. */
static int scratch(gpu_state *st, size_t bytes, sim_err *err)
{
    if (bytes <= st->probe_bytes)
        return SIM_OK;
    gpu_probe_free(st);
    GPU_TRY(gpu_alloc(st, &st->d_probe, bytes, "viewer reads", err));
    st->probe_bytes = bytes;
    return SIM_OK;
}

/* Blocks of GPU_EW_THREADS for a grid-stride loop over n >= 1 items: no more than n needs, and
 * at most GPU_PROBE_BLOCKS_MAX whatever n (the loop covers the rest). */
static unsigned ew_blocks(int64_t n)
{
    int64_t b = (n + GPU_EW_THREADS - 1) / GPU_EW_THREADS;
    return (unsigned)(b < GPU_PROBE_BLOCKS_MAX ? b : GPU_PROBE_BLOCKS_MAX);
}

/* ---- Thread helpers ---- */

__device__ __forceinline__ int probe_wrap(int v, int n)
{
    v %= n;
    return v < 0 ? v + n : v;
}

/* The first index of this thread and the stride of a grid-stride loop, in int64. */
__device__ __forceinline__ int64_t ew_first(void)
{
    return (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t ew_stride(void)
{
    return (int64_t)gridDim.x * blockDim.x;
}

/* ---- Region sums ---- */

/* Thread per sampled cell: x over the sampled columns (the threads of a warp read neighbouring
 * cells when the samples are neighbours), y over the sampled rows, strided by gridDim.y (a grid
 * side is at most 65535 blocks). Row by row of the disk: a span of 2hw+1 <= 129 cells of
 * |sim_fix| <= 2^23 sums to under 2^31, exact in int32; the rows add in int64. A periodic span
 * wider than the grid wraps as often as it needs (the brute force counts those cells again
 * too); a bounded one is clipped (cells outside count 0). A warp shares iy and dy, so its loop
 * bounds differ only where a bounded span is clipped. No shared memory; the half-widths
 * (sim_disk, 520 B) travel in the parameter bank. */
static __global__ void __launch_bounds__(GPU_PROBE_THREADS)
region_sums_kernel(const float *__restrict__ field, int w, int h, int periodic, sim_disk d,
                   const int32_t *__restrict__ xs, int nx, const int32_t *__restrict__ ys, int ny,
                   int64_t *__restrict__ out)
{
    const int ix = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (ix >= nx)
        return;
    const int x = xs[ix], r = d.r;
    for (int iy = (int)blockIdx.y; iy < ny; iy += (int)gridDim.y) {
        int64_t sum = 0;
        for (int dy = -r; dy <= r; dy++) {
            int yy = ys[iy] + dy;
            if (periodic)
                yy = probe_wrap(yy, h);
            else if (yy < 0 || yy >= h)
                continue; /* a row outside the grid adds 0 */
            const float *row = field + (size_t)yy * (size_t)w;
            const int hw = d.hw[dy + r];
            int32_t span = 0;
            if (periodic) {
                int xx = probe_wrap(x - hw, w);
                for (int k = 0; k <= 2 * hw; k++) {
                    span += sim_fix32(row[xx]);
                    xx = xx + 1 == w ? 0 : xx + 1;
                }
            } else {
                const int lo = x - hw < 0 ? 0 : x - hw;
                const int hi = x + hw >= w ? w - 1 : x + hw;
                for (int xx = lo; xx <= hi; xx++)
                    span += sim_fix32(row[xx]);
            }
            sum += span;
        }
        out[(size_t)iy * (size_t)nx + (size_t)ix] = sum;
    }
}

int gpu_probe_region_sums(gpu_state *st, const int32_t *xs, int nx, const int32_t *ys, int ny,
                          int64_t *out, sim_err *err)
{
    const size_t bx = align_up((size_t)nx * sizeof(int32_t));
    const size_t by = align_up((size_t)ny * sizeof(int32_t));
    const size_t bout = (size_t)nx * (size_t)ny * sizeof(int64_t);
    GPU_TRY(scratch(st, bx + by + bout, err));
    char *base = (char *)st->d_probe;
    int32_t *d_xs = (int32_t *)base, *d_ys = (int32_t *)(base + bx);
    int64_t *d_out = (int64_t *)(base + bx + by);
    GPU_CHECK(err, cudaMemcpyAsync(d_xs, xs, (size_t)nx * sizeof(int32_t),
                                   cudaMemcpyHostToDevice, st->stream));
    GPU_CHECK(err, cudaMemcpyAsync(d_ys, ys, (size_t)ny * sizeof(int32_t),
                                   cudaMemcpyHostToDevice, st->stream));
    sim_disk d;
    sim_disk_init(&d, st->sc.radius); /* the CPU's half-widths, from the same code */
    dim3 grid((unsigned)((nx + GPU_PROBE_THREADS - 1) / GPU_PROBE_THREADS),
              (unsigned)(ny < 65535 ? ny : 65535));
    region_sums_kernel<<<grid, GPU_PROBE_THREADS, 0, st->stream>>>(
        st->d_field, st->w, st->h, st->periodic, d, d_xs, nx, d_ys, ny, d_out);
    GPU_CHECK_LAUNCH(err, st->stream);
    GPU_CHECK(err, cudaMemcpyAsync(out, d_out, bout, cudaMemcpyDeviceToHost, st->stream));
    GPU_CHECK(err, cudaStreamSynchronize(st->stream));
    return SIM_OK;
}

/* ---- Field and agent at cells ---- */

/* An empty entry of the cell -> agent map (every id is below SIM_MAX_CELLS = 2^30). */
#define PROBE_NO_AGENT 0xffffffffu

/* Thread per query (grid-stride): the field value, and the agent from the map when there is
 * one; without a map the slot starts at ~0 for agent_scan_kernel. ~0 is -1 read as the caller's
 * int64, and above every id for atomicMin. */
static __global__ void read_cells_kernel(const float *__restrict__ field,
                                         const uint32_t *__restrict__ cells, int64_t n,
                                         const uint32_t *__restrict__ map, float *values,
                                         unsigned long long *agents)
{
    for (int64_t i = ew_first(); i < n; i += ew_stride()) {
        const uint32_t c = cells[i];
        values[i] = field[c];
        const uint32_t a = map ? map[c] : PROBE_NO_AGENT;
        agents[i] = a == PROBE_NO_AGENT ? ~0ull : (unsigned long long)a;
    }
}

/* Thread per agent (grid-stride), the n <= GPU_PROBE_SCAN_MAX queried cells in shared memory
 * (4 * GPU_PROBE_SCAN_MAX bytes, static; all threads read the same cell at once: a broadcast).
 * An agent standing on a queried cell writes its id into that query's slot. One agent stands on
 * a cell, so a slot has one writer; atomicMin keeps the answer defined (the lowest id) even if
 * that were broken. */
static __global__ void __launch_bounds__(GPU_EW_THREADS)
agent_scan_kernel(const uint32_t *__restrict__ agent_cell, int64_t n_agents,
                  const uint32_t *__restrict__ cells, int n, unsigned long long *agents)
{
    __shared__ uint32_t q[GPU_PROBE_SCAN_MAX];
    for (int k = (int)threadIdx.x; k < n; k += (int)blockDim.x)
        q[k] = cells[k];
    __syncthreads();
    for (int64_t i = ew_first(); i < n_agents; i += ew_stride()) {
        const uint32_t c = agent_cell[i];
        for (int k = 0; k < n; k++)
            if (q[k] == c)
                atomicMin(&agents[k], (unsigned long long)i);
    }
}

/* Thread per agent (grid-stride): map[cell] = id. One agent per cell: one writer per entry. */
static __global__ void agent_map_kernel(const uint32_t *__restrict__ agent_cell, int64_t n_agents,
                                        uint32_t *map)
{
    for (int64_t i = ew_first(); i < n_agents; i += ew_stride())
        map[agent_cell[i]] = (uint32_t)i;
}

/* The work of gpu_probe_read_cells; *d_map is the map when one was allocated (the caller frees
 * it on every path). */
static int read_cells_inner(gpu_state *st, const uint32_t *cells, int64_t n, float *values,
                            int64_t *agents, uint32_t **d_map, sim_err *err)
{
    const size_t bq = align_up((size_t)n * sizeof(uint32_t));
    const size_t bv = align_up((size_t)n * sizeof(float));
    const size_t ba = (size_t)n * sizeof(unsigned long long);
    GPU_TRY(scratch(st, bq + bv + ba, err));
    char *base = (char *)st->d_probe;
    uint32_t *d_q = (uint32_t *)base;
    float *d_v = (float *)(base + bq);
    unsigned long long *d_a = (unsigned long long *)(base + bq + bv);
    GPU_CHECK(err, cudaMemcpyAsync(d_q, cells, (size_t)n * sizeof(uint32_t),
                                   cudaMemcpyHostToDevice, st->stream));
    /* Few queries: one pass over the agents compares each with all of them. Many: a cell ->
     * agent map costs one pass over the grid instead of n passes' worth of compares. */
    const int scan = n <= GPU_PROBE_SCAN_MAX;
    if (!scan && st->n > 0) {
        const size_t bm = (size_t)st->cells * sizeof(uint32_t);
        GPU_TRY(gpu_alloc(st, (void **)d_map, bm, "cell -> agent map", err));
        GPU_CHECK(err, cudaMemsetAsync(*d_map, 0xff, bm, st->stream));
        agent_map_kernel<<<ew_blocks(st->n), GPU_EW_THREADS, 0, st->stream>>>(st->d_cells,
                                                                              st->n, *d_map);
        GPU_CHECK_LAUNCH(err, st->stream);
    }
    read_cells_kernel<<<ew_blocks(n), GPU_EW_THREADS, 0, st->stream>>>(st->d_field, d_q, n,
                                                                       *d_map, d_v, d_a);
    GPU_CHECK_LAUNCH(err, st->stream);
    if (scan && st->n > 0) {
        agent_scan_kernel<<<ew_blocks(st->n), GPU_EW_THREADS, 0, st->stream>>>(
            st->d_cells, st->n, d_q, (int)n, d_a);
        GPU_CHECK_LAUNCH(err, st->stream);
    }
    GPU_CHECK(err, cudaMemcpyAsync(values, d_v, (size_t)n * sizeof(float),
                                   cudaMemcpyDeviceToHost, st->stream));
    /* unsigned long long and int64_t have one size and ~0 is -1: copied as they are. */
    GPU_CHECK(err, cudaMemcpyAsync(agents, d_a, ba, cudaMemcpyDeviceToHost, st->stream));
    GPU_CHECK(err, cudaStreamSynchronize(st->stream));
    return SIM_OK;
}

int gpu_probe_read_cells(gpu_state *st, const uint32_t *cells, int64_t n, float *values,
                         int64_t *agents, sim_err *err)
{
    uint32_t *d_map = NULL;
    int rc = read_cells_inner(st, cells, n, values, agents, &d_map, err);
    if (d_map) {
        gpu_alloc_free(d_map);
        /* The map is the call's own; the scratch block, if it grew, stays counted. */
        st->bytes -= (size_t)st->cells * sizeof(uint32_t);
    }
    return rc;
}

/* ---- Cells of agents ---- */

/* Thread per query (grid-stride): the cell of agent ids[i]. */
static __global__ void agent_cells_kernel(const uint32_t *__restrict__ agent_cell,
                                          const int64_t *__restrict__ ids, int64_t n,
                                          uint32_t *out)
{
    for (int64_t i = ew_first(); i < n; i += ew_stride())
        out[i] = agent_cell[ids[i]];
}

int gpu_probe_agent_cells(gpu_state *st, const int64_t *ids, int64_t n, uint32_t *cells,
                          sim_err *err)
{
    const size_t bi = align_up((size_t)n * sizeof(int64_t));
    const size_t bc = (size_t)n * sizeof(uint32_t);
    GPU_TRY(scratch(st, bi + bc, err));
    char *base = (char *)st->d_probe;
    int64_t *d_ids = (int64_t *)base;
    uint32_t *d_c = (uint32_t *)(base + bi);
    GPU_CHECK(err, cudaMemcpyAsync(d_ids, ids, (size_t)n * sizeof(int64_t),
                                   cudaMemcpyHostToDevice, st->stream));
    agent_cells_kernel<<<ew_blocks(n), GPU_EW_THREADS, 0, st->stream>>>(st->d_cells, d_ids, n,
                                                                        d_c);
    GPU_CHECK_LAUNCH(err, st->stream);
    GPU_CHECK(err, cudaMemcpyAsync(cells, d_c, bc, cudaMemcpyDeviceToHost, st->stream));
    GPU_CHECK(err, cudaStreamSynchronize(st->stream));
    return SIM_OK;
}
