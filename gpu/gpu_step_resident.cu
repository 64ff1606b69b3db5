/* gpu_step_resident.cu - the steps of a batch of a small world in one kernel launch.
 *
 * A small world's step is a few microseconds of work spread over 5-6 dependent kernels, each a
 * launch and a drain of the GPU (gpu/BENCH.md: 26 us a step at 64^2 with no host wait at all,
 * about 5 us a kernel). Here one cooperative grid, every block resident at once, runs all the
 * steps of a batch, the phases of a step separated by grid-wide barriers instead of kernel
 * boundaries:
 *   A  decide: blocks take tiles (tile = block, block + grid, ...) and run the tile-sum block
 *      routines with the decide consumer (gpu_horizon_block.cuh), as the tile-sum kernel does;
 *   B  move: thread per agent in tile order (gpu_step_move_agent, with the deposit), counted
 *      into the new tiles, the warp's moves into the step's slot of the control ring;
 *   C  block 0 scans the tile counts into the next bins' starts and advances the step index;
 *      every block runs the first Jacobi sweep (or, with no sweeps, the decay in place);
 *   D  the scatter into the next bins, beside the second sweep;
 *   E  each further sweep, one phase each.
 * The same routines in the same order of effects as the graph path (gpu_step.cu), so the same
 * bits: the sums and decisions are functions of the agent and the field; claims are a maximum of
 * unique keys; a Jacobi cell is sim_jacobi of its neighbours by the boundary rule, decay fused
 * into the step's last sweep (as the CPU's sweeps and the fused kernels do it). The bins' order
 * within a tile may differ from the graph path's: nothing depends on it (gpu_bins.h).
 *
 * Coherence: data written during the kernel (field, occupancy, bins, claims) is read with
 * ordinary loads, never through the read-only cache (the NC = false instances of the block
 * routines); the grid barrier orders every phase's writes before the next phase's reads.
 *
 * Used for batches without statistics (gpu_step_batch.cu) when gpu_step_resident_use says so:
 * tiny worlds (GPU_RES_CELLS_MAX), where it beats one graph a step; from 512^2 on the graphs
 * win (gpu/BENCH.md). The grid has a block per tile, and one per GPU_RES_CELLS_PER_THREAD
 * cells a thread, up to the blocks the device holds at once. HORIZON_RES_PROFILE=1 prints
 * block 0's cycles per phase, HORIZON_RES_BLOCKS=N fixes the grid (measuring aids). */
#include <cooperative_groups.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu_check.h"
#include "gpu_horizon_block.cuh"
#include "gpu_policy.h"
#include "gpu_state.h"
#include "gpu_step_agent.cuh"

namespace cg = cooperative_groups;

#define FULL_MASK 0xffffffffu

/* Everything the kernel reads and writes, by value (device pointers). */
typedef struct res_args {
    gpu_hz_geom g;
    gpu_bins_geom bg;
    gpu_jac jac;
    float *field, *spare;        /* the current field, the other buffer */
    unsigned long long *claim, *key;
    uint32_t *occ, *cells, *target;
    uint32_t *ids[2], *bcells[2], *begin[2];
    uint32_t *count, *rank;
    int set;                     /* the bins set of the first step */
    unsigned long long *d_step;  /* the step index (advanced in phase C) */
    gpu_ctl *ring;               /* slot k: step k's moved (zeroed by the host) */
    uint64_t seed, threshold;
    int64_t n;
    int steps, sweeps, decay;
    float deposit;
    long long *prof;             /* not NULL: block 0's clock64() after each phase (diagnostic) */
} res_args;

/* A grid-wide barrier; one block needs only its own. With prof, block 0 notes the time after
 * it in prof[(*slot)++]. */
__device__ __forceinline__ void res_sync(cg::grid_group &grid, long long *prof, int *slot)
{
    if (gridDim.x == 1)
        __syncthreads();
    else
        grid.sync();
    if (prof && blockIdx.x == 0 && threadIdx.x == 0)
        prof[*slot] = clock64();
    ++*slot;
}

/* Cell (x, y) after one sweep of src: sim_jacobi of the cell and its four neighbours by the
 * boundary rule (periodic wraps, wall mirrors the cell, fixed uses the edge's value), times
 * keep when `decay` (the step's last sweep). The CPU's order of operations (sim_diffuse.c).
 * Without branches: the five loads are always made (a wall's and a fixed edge's neighbour
 * index is the cell itself), the fixed values replace them after, so that the loads of
 * several cells can be in flight together. */
__device__ __forceinline__ float res_jacobi_cell(const gpu_jac &p, const float *src, int x, int y,
                                                 bool decay)
{
    const bool per = p.boundary == SIM_BOUNDARY_PERIODIC;
    const bool fixed = !per && p.boundary != SIM_BOUNDARY_WALL;
    const int yn = y > 0 ? y - 1 : per ? p.h - 1 : y;
    const int ys = y < p.h - 1 ? y + 1 : per ? 0 : y;
    const int xw = x > 0 ? x - 1 : per ? p.w - 1 : x;
    const int xe = x < p.w - 1 ? x + 1 : per ? 0 : x;
    const size_t w = (size_t)p.w, row = (size_t)y * w;
    const float c = src[row + x];
    float n = src[(size_t)yn * w + x], s = src[(size_t)ys * w + x];
    float wv = src[row + xw], e = src[row + xe];
    if (fixed) {
        n = y == 0 ? p.fixed_top : n;
        s = y == p.h - 1 ? p.fixed_bottom : s;
        wv = x == 0 ? p.fixed_left : wv;
        e = x == p.w - 1 ? p.fixed_right : e;
    }
    const float v = sim_jacobi(c, n, s, e, wv, p.a, p.one_minus_a);
    return decay ? SIM_FMUL(v, p.keep) : v;
}

/* One sweep src -> dst over the whole grid, thread-strided, GPU_RES_SWEEP_CELLS cells of a
 * thread at a time: all their loads are issued before any store (a store between them would
 * order every later load after it), so their latencies overlap. */
__device__ __forceinline__ void res_sweep(const gpu_jac &p, const float *src, float *dst,
                                          bool decay)
{
    const int64_t cells = (int64_t)p.w * p.h, stride = (int64_t)gridDim.x * blockDim.x;
    const bool narrow = cells <= (int64_t)UINT32_MAX;
    for (int64_t i0 = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i0 < cells;
         i0 += GPU_RES_SWEEP_CELLS * stride) {
        float v[GPU_RES_SWEEP_CELLS];
#pragma unroll
        for (int u = 0; u < GPU_RES_SWEEP_CELLS; u++) {
            /* past the end: the last cell again (computed, not stored) */
            const int64_t i = i0 + u * stride < cells ? i0 + u * stride : cells - 1;
            const int y = narrow ? (int)((uint32_t)i / (uint32_t)p.w) : (int)(i / p.w);
            const int x = (int)(i - (int64_t)y * p.w);
            v[u] = res_jacobi_cell(p, src, x, y, decay);
        }
#pragma unroll
        for (int u = 0; u < GPU_RES_SWEEP_CELLS; u++) {
            const int64_t i = i0 + u * stride;
            if (i < cells)
                dst[i] = v[u];
        }
    }
}

typedef cub::BlockScan<uint32_t, GPU_HZ_THREADS> res_scan_t;

template <int MODE, bool SMALL>
__global__ void __launch_bounds__(GPU_HZ_THREADS, 1) resident_kernel(res_args a)
{
    typedef typename hz_acc<SMALL>::type dense_t;
    extern __shared__ uint4 hz_smem[];
    __shared__ int s_hwp[2 * SIM_MAX_RADIUS + 5];
    __shared__ int s_count[32];
    __shared__ uint16_t s_deal[GPU_HZ_THREADS];
    __shared__ typename res_scan_t::TempStorage s_scan;
    cg::grid_group grid = cg::this_grid();
    const gpu_hz_geom &g = a.g;
    uint32_t *I = reinterpret_cast<uint32_t *>(hz_smem);
    dense_t *D = reinterpret_cast<dense_t *>(I + g.RS * g.PW);
    gpu_hz_block_halfwidths(s_hwp, g.r);
    __syncthreads();

    gpu_hz_decide_out<false> out;
    out.a.seed = a.seed;
    out.a.threshold = a.threshold;
    out.a.d_step = a.d_step;
    out.a.d_claim = a.claim;
    out.a.d_occ = a.occ;
    out.a.d_target = a.target;
    out.a.d_key = a.key;
    out.a.queue_zeroed = 1;
    out.a.pdl = 0;
    out.w = g.w;
    out.h = g.h;
    out.periodic = g.periodic;

    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    float *cur = a.field, *other = a.spare;
    int set = a.set, slot = 1;
    if (a.prof && blockIdx.x == 0 && threadIdx.x == 0)
        a.prof[0] = clock64();
    for (int k = 0; k < a.steps; k++) {
        /* A: sense, decide, claim */
        const uint32_t *ids = a.ids[set], *bcells = a.bcells[set], *begin = a.begin[set];
        for (int tile = blockIdx.x; tile < g.ntiles; tile += gridDim.x) {
            const uint32_t b0 = begin[tile], b1 = begin[tile + 1];
            if (b0 == b1)
                continue;
            const gpu_hz_tile t = gpu_hz_tile_at(g, tile);
            gpu_hz_block_load<MODE, SMALL, false>(I, D, g, cur, s_hwp, t);
            gpu_hz_block_serve<MODE, SMALL>(I, D, g, s_hwp, t, ids, bcells, 1, b0, b1, s_count,
                                            s_deal, out);
            __syncthreads(); /* I and D are rebuilt for the next tile */
        }
        res_sync(grid, a.prof, &slot);

        /* B: move, deposit, count into the new tiles */
        for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < a.n; base += stride) {
            const int64_t q = base + threadIdx.x;
            const bool live = q < a.n;
            int mv = 0;
            uint32_t c = 0;
            if (live)
                c = gpu_step_move_agent(q, ids, bcells, a.target, a.key, a.claim, a.occ, a.cells,
                                        cur, a.deposit, 0, &mv);
            gpu_bins_count_warp(live, live ? gpu_bins_tile_of(c, a.bg) : 0u, a.count, a.rank, q);
            const unsigned votes = __ballot_sync(FULL_MASK, mv);
            if ((threadIdx.x & 31) == 0 && votes)
                atomicAdd(&a.ring[k].moved, (unsigned long long)__popc(votes));
        }
        res_sync(grid, a.prof, &slot);

        /* C: the next bins' starts; the first sweep (or the decay) */
        if (blockIdx.x == 0)
            gpu_bins_scan_block<GPU_HZ_THREADS, GPU_RES_SCAN_ITEMS>(a.count, g.ntiles,
                                                                    a.begin[set ^ 1], a.d_step,
                                                                    s_scan);
        if (a.sweeps > 0) {
            res_sweep(a.jac, cur, other, a.decay && a.sweeps == 1);
            float *t = cur;
            cur = other;
            other = t;
        } else if (a.decay) {
            const int64_t cells = (int64_t)g.w * g.h;
            for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < cells;
                 i += stride)
                cur[i] = SIM_FMUL(cur[i], a.jac.keep);
        }
        res_sync(grid, a.prof, &slot);

        /* D: the scatter into the next bins, beside the second sweep; E: each further sweep */
        for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < a.n; q += stride)
            gpu_bins_scatter_one(ids[q], a.target[q], a.rank[q], a.begin[set ^ 1], a.bg, a.n,
                                 a.ids[set ^ 1], a.bcells[set ^ 1]);
        for (int i = 2; i <= a.sweeps; i++) {
            if (i > 2)
                res_sync(grid, a.prof, &slot);
            res_sweep(a.jac, cur, other, a.decay && i == a.sweeps);
            float *t = cur;
            cur = other;
            other = t;
        }
        res_sync(grid, a.prof, &slot);
        set ^= 1;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Dispatch                                                                                    */

typedef void (*res_kernel_fn)(res_args);

static res_kernel_fn kernel_for(const gpu_state *st)
{
    if (st->plan.mode == GPU_HMODE_DENSE)
        return st->geom.small ? resident_kernel<GPU_HMODE_DENSE, true>
                              : resident_kernel<GPU_HMODE_DENSE, false>;
    return st->geom.small ? resident_kernel<GPU_HMODE_SPARSE, true>
                          : resident_kernel<GPU_HMODE_SPARSE, false>;
}

int gpu_step_resident_plan(gpu_state *st, sim_err *err)
{
    st->res_blocks = 0;
    /* Not planned where it would not be used: the kernel's attributes and occupancy are asked
     * for only in the worlds that run it (creation stays as cheap as it was for the others). */
    const int wanted = st->tune.resident == GPU_RES_ON ||
                       (st->tune.resident == GPU_RES_AUTO && st->cells <= GPU_RES_CELLS_MAX);
    if (st->n <= 0 || !wanted)
        return SIM_OK;
    int dev = 0, coop = 0, sms = 0, optin = 0;
    GPU_CHECK(err, cudaGetDevice(&dev));
    GPU_CHECK(err, cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    if (!coop)
        return SIM_OK;
    GPU_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    GPU_CHECK(err, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    const res_kernel_fn fn = kernel_for(st);
    cudaFuncAttributes fa;
    GPU_CHECK(err, cudaFuncGetAttributes(&fa, fn));
    /* The device's limit, not this plan's need (see gpu_horizon.cu's plan_kernel). */
    GPU_CHECK(err, cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        optin - (int)fa.sharedSizeBytes));
    int per_sm = 0;
    GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, GPU_HZ_THREADS,
                                                                 st->plan.tile_smem));
    const int64_t fit = (int64_t)per_sm * sms;
    const int64_t by_cells =
        (st->cells + (int64_t)GPU_HZ_THREADS * GPU_RES_CELLS_PER_THREAD - 1) /
        ((int64_t)GPU_HZ_THREADS * GPU_RES_CELLS_PER_THREAD);
    int64_t want = st->geom.ntiles > by_cells ? st->geom.ntiles : by_cells;
    const char *forced = getenv("HORIZON_RES_BLOCKS"); /* a measuring aid */
    if (forced && atoi(forced) > 0)
        want = atoi(forced);
    if (want > fit)
        want = fit;
    st->res_blocks = (int)want; /* 0 when not one block fits */
    return SIM_OK;
}

int gpu_step_resident_use(const gpu_state *st)
{
    /* Chosen automatically, it serves the first GPU_BATCH_RUN_AFTER batched steps: from then on
     * an instance captures runs of steps, whose kernels overlap (programmatic dependence) and
     * run faster (GPU_RES_CELLS_MAX). */
    if (st->tune.resident == GPU_RES_AUTO && st->batched > GPU_BATCH_RUN_AFTER)
        return 0;
    return st->res_blocks > 0;
}

int gpu_step_resident_run(gpu_state *st, int64_t step, int n, sim_stats *out, sim_err *err)
{
    cudaStream_t s = st->stream;
    GPU_TRY(gpu_step_upload(st, step, err));
    GPU_CHECK(err, cudaMemsetAsync(st->d_ctl_ring, 0, (size_t)n * sizeof(gpu_ctl), s));
    gpu_bins_agents *b = &st->ab;
    res_args a;
    memset(&a, 0, sizeof a);
    a.g = st->geom;
    a.bg = gpu_bins_geom_of(&st->geom);
    a.jac = st->jac;
    a.field = st->d_field;
    a.spare = st->d_spare;
    a.claim = st->d_claim;
    a.key = st->d_key;
    a.occ = st->d_occ;
    a.cells = st->d_cells;
    a.target = st->d_target;
    for (int i = 0; i < 2; i++) {
        a.ids[i] = b->ids[i];
        a.bcells[i] = b->cells[i];
        a.begin[i] = b->begin[i];
    }
    a.count = b->count;
    a.rank = b->rank;
    a.set = b->cur;
    a.d_step = &st->d_ctl->step;
    a.ring = st->d_ctl_ring;
    a.seed = st->sc.seed;
    a.threshold = st->threshold;
    a.n = st->n;
    a.steps = n;
    a.sweeps = st->sc.sweeps;
    a.decay = st->sc.decay > 0.0f;
    a.deposit = st->sc.deposit;
    /* HORIZON_RES_PROFILE=1: block 0's cycles per phase, averaged over the batch, to stderr
     * (a diagnostic for the bench's figures; the steps are the same). */
    static const int profile = getenv("HORIZON_RES_PROFILE") != NULL;
    const int per_step = 3 + (st->sc.sweeps > 2 ? st->sc.sweeps - 1 : 1);
    const size_t prof_n = 1 + (size_t)n * per_step;
    if (profile)
        GPU_CHECK(err, cudaMalloc((void **)&a.prof, prof_n * sizeof(long long)));
    void *args[] = {&a};
    /* One tile's shared memory whatever the plan's mapping: blocks here take single tiles. */
    GPU_CHECK(err, cudaLaunchCooperativeKernel((const void *)kernel_for(st), dim3(st->res_blocks),
                                               dim3(GPU_HZ_THREADS), args, st->plan.tile_smem,
                                               s));
    GPU_CHECK(err, cudaMemcpyAsync(st->h_ctl_ring, st->d_ctl_ring, (size_t)n * sizeof(gpu_ctl),
                                   cudaMemcpyDeviceToHost, s));
    GPU_CHECK(err, cudaStreamSynchronize(s));
    if (profile) {
        long long h[1 + SIM_STEP_BATCH_MAX * 12];
        double mean[12] = {0};
        const int m = per_step < 12 ? per_step : 12;
        GPU_CHECK(err, cudaMemcpy(h, a.prof, prof_n * sizeof(long long), cudaMemcpyDeviceToHost));
        cudaFree(a.prof);
        for (int k = 0; k < n; k++)
            for (int j = 0; j < m; j++)
                mean[j] += (double)(h[1 + k * per_step + j] - h[k * per_step + j]) / n;
        fprintf(stderr, "resident profile: %d steps, %d blocks, cycles a step by phase:", n,
                st->res_blocks);
        double total = 0;
        for (int j = 0; j < m; j++) {
            fprintf(stderr, " %.0f", mean[j]);
            total += mean[j];
        }
        fprintf(stderr, " = %.0f\n", total);
    }
    gpu_step_ran(st, step, n);
    /* Each sweep swapped the buffers; the bins set flipped every step. */
    if (st->sc.sweeps > 0 && ((int64_t)st->sc.sweeps * n) % 2) {
        float *t = st->d_field;
        st->d_field = st->d_spare;
        st->d_spare = t;
    }
    if (n % 2)
        b->cur ^= 1;
    for (int k = 0; k < n; k++)
        gpu_step_stats(st, &st->h_ctl_ring[k], NULL, 0, &out[k]);
    return SIM_OK;
}
