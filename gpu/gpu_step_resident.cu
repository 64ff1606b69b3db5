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
 * block 0's cycles per phase, HORIZON_RES_BLOCKS=N fixes the grid (measuring aids).
 *
 * Tiny worlds (GPU_TINY_CELLS_AUTO) take the one-block kernel instead (tiny_kernel): a barrier
 * of the grid costs ~2,000 cycles and a phase's work is a chain of global-memory latencies, so
 * one block of GPU_TINY_THREADS keeps the batch's whole state in shared memory: the field (two
 * buffers), the occupancy bitmap, the claim words, the prefix rows of one region that covers the
 * world (gpu_hz_geometry_whole) and the agents (id, cell, target, key), read in at the start
 * and written back at the end (the field, the bitmap, the cells by id, and the bins rebuilt in
 * the current set, in any order within a tile). A step: the prefix rows (the tile-sum kernel's
 * load_rows, from shared memory through row and column maps of the region); a thread per agent,
 * dealt by shared-memory bank, sums its candidates sparsely, decides and claims
 * (gpu_hz_decide_claim); the moves and deposits (gpu_step_move_cell), counted into the next
 * deal; the sweeps, a thread per column strip, from one buffer into the other. Same routines,
 * same bits. */
#include <cooperative_groups.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_check.h"
#include "gpu_horizon_block.cuh"
#include "gpu_policy.h"
#include "gpu_state.h"
#include "gpu_stats.cuh"
#include "gpu_step_agent.cuh"

namespace cg = cooperative_groups;

#define FULL_MASK 0xffffffffu

/* What both resident kernels read and write, by value (device pointers; res_step_of). */
typedef struct res_step {
    gpu_bins_geom bg;
    gpu_jac jac;
    float *field;                /* the current field */
    uint32_t *occ, *cells;       /* the occupancy bitmap, the agents' cells by id */
    unsigned long long *d_step;  /* the step index */
    gpu_ctl *ring;               /* slot k: step k's moved (zeroed by the host) */
    uint64_t seed, threshold;
    int64_t n;
    int steps, sweeps, decay;
    float deposit;
    long long *prof;             /* not NULL: block 0's clock64() after each phase (prof_begin) */
} res_step;

/* The cooperative grid's arguments besides res_step. */
typedef struct res_args {
    res_step c;
    gpu_hz_geom g;
    float *spare;                /* the other field buffer */
    unsigned long long *claim, *key;
    uint32_t *target;
    uint32_t *ids[2], *bcells[2], *begin[2];
    uint32_t *count, *rank;
    int set;                     /* the bins set of the first step */
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
    out.a.seed = a.c.seed;
    out.a.threshold = a.c.threshold;
    out.a.d_step = a.c.d_step;
    out.a.d_claim = a.claim;
    out.a.d_occ = a.c.occ;
    out.a.d_target = a.target;
    out.a.d_key = a.key;
    out.a.queue_zeroed = 1;
    out.a.pdl = 0;
    out.w = g.w;
    out.h = g.h;
    out.periodic = g.periodic;

    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    float *cur = a.c.field, *other = a.spare;
    int set = a.set, slot = 1;
    if (a.c.prof && blockIdx.x == 0 && threadIdx.x == 0)
        a.c.prof[0] = clock64();
    for (int k = 0; k < a.c.steps; k++) {
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
        res_sync(grid, a.c.prof, &slot);

        /* B: move, deposit, count into the new tiles */
        for (int64_t base = (int64_t)blockIdx.x * blockDim.x; base < a.c.n; base += stride) {
            const int64_t q = base + threadIdx.x;
            const bool live = q < a.c.n;
            int mv = 0;
            uint32_t c = 0;
            if (live)
                c = gpu_step_move_agent(q, ids, bcells, a.target, a.key, a.claim, a.c.occ,
                                        a.c.cells, cur, a.c.deposit, 0, &mv);
            gpu_bins_count_warp(live, live ? gpu_bins_tile_of(c, a.c.bg) : 0u, a.count, a.rank, q);
            const unsigned votes = __ballot_sync(FULL_MASK, mv);
            if ((threadIdx.x & 31) == 0 && votes)
                atomicAdd(&a.c.ring[k].moved, (unsigned long long)__popc(votes));
        }
        res_sync(grid, a.c.prof, &slot);

        /* C: the next bins' starts; the first sweep (or the decay) */
        if (blockIdx.x == 0)
            gpu_bins_scan_block<GPU_HZ_THREADS, GPU_RES_SCAN_ITEMS>(a.count, g.ntiles,
                                                                    a.begin[set ^ 1], a.c.d_step,
                                                                    s_scan);
        if (a.c.sweeps > 0) {
            res_sweep(a.c.jac, cur, other, a.c.decay && a.c.sweeps == 1);
            float *t = cur;
            cur = other;
            other = t;
        } else if (a.c.decay) {
            const int64_t cells = (int64_t)g.w * g.h;
            for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < cells;
                 i += stride)
                cur[i] = SIM_FMUL(cur[i], a.c.jac.keep);
        }
        res_sync(grid, a.c.prof, &slot);

        /* D: the scatter into the next bins, beside the second sweep; E: each further sweep */
        for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < a.c.n; q += stride)
            gpu_bins_scatter_one(ids[q], a.target[q], a.rank[q], a.begin[set ^ 1], a.c.bg, a.c.n,
                                 a.ids[set ^ 1], a.bcells[set ^ 1]);
        for (int i = 2; i <= a.c.sweeps; i++) {
            if (i > 2)
                res_sync(grid, a.c.prof, &slot);
            res_sweep(a.c.jac, cur, other, a.c.decay && i == a.c.sweeps);
            float *t = cur;
            cur = other;
            other = t;
        }
        res_sync(grid, a.c.prof, &slot);
        set ^= 1;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Host side shared by both kernels                                                            */

/* The arguments both kernels share, for n steps from the instance's current state. */
static res_step res_step_of(const gpu_state *st, int n)
{
    res_step c;
    memset(&c, 0, sizeof c);
    c.bg = gpu_bins_geom_of(&st->geom);
    c.jac = st->jac;
    c.field = st->d_field;
    c.occ = st->d_occ;
    c.cells = st->d_cells;
    c.d_step = &st->d_ctl->step;
    c.ring = st->d_ctl_ring;
    c.seed = st->sc.seed;
    c.threshold = st->threshold;
    c.n = st->n;
    c.steps = n;
    c.sweeps = st->sc.sweeps;
    c.decay = st->sc.decay > 0.0f;
    c.deposit = st->sc.deposit;
    return c;
}

/* HORIZON_RES_PROFILE=1 (a diagnostic for the bench's figures; the steps are the same): block
 * 0's clock64() after each phase, into a device array of 1 + n * per_step marks (*d; NULL when
 * off), and their mean differences a step to stderr after the batch. */
static int prof_begin(int n, int per_step, long long **d, sim_err *err)
{
    static const int profile = getenv("HORIZON_RES_PROFILE") != NULL;
    *d = NULL;
    if (profile)
        GPU_CHECK(err, cudaMalloc((void **)d, (1 + (size_t)n * per_step) * sizeof(long long)));
    return SIM_OK;
}

static int prof_report(long long *d, int n, int per_step, int blocks, sim_err *err)
{
    if (!d)
        return SIM_OK;
    const size_t marks = 1 + (size_t)n * per_step;
    long long *h = (long long *)malloc(marks * sizeof(long long));
    const cudaError_t e = h ? cudaMemcpy(h, d, marks * sizeof(long long), cudaMemcpyDeviceToHost)
                            : cudaErrorMemoryAllocation;
    cudaFree(d);
    if (e != cudaSuccess)
        free(h);
    GPU_CHECK(err, e);
    fprintf(stderr, "resident profile: %d steps, %d blocks, cycles a step by phase:", n, blocks);
    double total = 0;
    for (int j = 0; j < per_step; j++) {
        double mean = 0;
        for (int k = 0; k < n; k++)
            mean += (double)(h[1 + k * per_step + j] - h[k * per_step + j]) / n;
        fprintf(stderr, " %.0f", mean);
        total += mean;
    }
    fprintf(stderr, " = %.0f\n", total);
    free(h);
    return SIM_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* The one-block kernel of tiny worlds                                                         */

typedef struct tiny_args {
    res_step c;      /* the field is read at the start, the result written at the end; the step
                        index advanced at the end */
    gpu_hz_geom g;   /* one tile of the whole world (gpu_hz_geometry_whole) */
    uint32_t *ids, *bcells, *begin; /* the bins set in use: read at the start, rebuilt at the end */
    uint32_t want[SIM_STEP_BATCH_MAX / 32]; /* bit k: step k's statistics */
    double *colsum; /* the column-sum ring: slot j for the j-th step with statistics */
    int rc;         /* g.r == rc: the sums with the radius compiled in (GPU_HZ_RC), or -1 */
} tiny_args;

/* Byte offsets of its shared memory, each 16-byte aligned. */
typedef struct tiny_layout {
    size_t claim, field[2], prefix, rowmap, colmap, occ, key, id, cell, target, deal, count;
    size_t bytes;
} tiny_layout;

static size_t tiny_take(size_t *at, size_t bytes)
{
    const size_t here = *at;
    *at += (bytes + 15) & ~(size_t)15;
    return here;
}

static tiny_layout tiny_layout_of(const gpu_hz_geom &g, int64_t n, int ntiles)
{
    const size_t cells = (size_t)g.w * (size_t)g.h, m = (size_t)n;
    tiny_layout l;
    size_t at = 0;
    l.claim = tiny_take(&at, cells * sizeof(unsigned long long));
    l.field[0] = tiny_take(&at, cells * sizeof(float));
    l.field[1] = tiny_take(&at, cells * sizeof(float));
    l.prefix = tiny_take(&at, (size_t)g.RS * (size_t)g.PW * sizeof(uint32_t));
    l.rowmap = tiny_take(&at, (size_t)g.RS * sizeof(int));
    l.colmap = tiny_take(&at, (size_t)g.PW * sizeof(int));
    l.occ = tiny_take(&at, (cells + 31) / 32 * sizeof(uint32_t));
    l.key = tiny_take(&at, m * sizeof(unsigned long long));
    l.id = tiny_take(&at, m * sizeof(uint32_t));
    l.cell = tiny_take(&at, m * sizeof(uint32_t));
    l.target = tiny_take(&at, m * sizeof(uint32_t));
    l.deal = tiny_take(&at, (m + 31) / 32 * 32 * sizeof(uint32_t));
    l.count = tiny_take(&at, ((size_t)ntiles + 1) * sizeof(uint32_t));
    l.bytes = at;
    return l;
}

/* Region coordinate v (region row or column) of a grid axis of n cells whose region starts at
 * -margin: the grid coordinate, wrapped on a periodic grid (as often as needed), or -1 beyond a
 * bounded one. */
__device__ __forceinline__ int tiny_axis(int v, int margin, int n, int periodic)
{
    const int c = v - margin;
    if (periodic)
        return wrap_index(c, n);
    return c >= 0 && c < n ? c : -1;
}

/* The region's groups of four cells from the field in shared memory, through the row and column
 * maps (tiny_axis), the one-block kernel's loader for load_rows. vec: the width is a multiple of
 * 4, so a group's four cells are one aligned float4 of one grid row, or all beyond the grid. */
struct tiny_region_groups {
    const float *F;
    const int *rowmap, *colmap;
    int w;
    bool vec;
    __device__ __forceinline__ float4 operator()(int i, int k) const
    {
        const int gy = rowmap[i];
        if (gy < 0)
            return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        const float *row = F + gy * w;
        if (vec) {
            const int gx = colmap[4 * k];
            return gx < 0 ? make_float4(0.0f, 0.0f, 0.0f, 0.0f)
                          : *reinterpret_cast<const float4 *>(row + gx);
        }
        float v[4];
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int gx = colmap[4 * k + e];
            v[e] = gx < 0 ? 0.0f : row[gx];
        }
        return make_float4(v[0], v[1], v[2], v[3]);
    }
};

/* The deal of agents to threads for the sums (as gpu_hz_block_serve_items deals a tile's): every
 * load of an agent's sums sits at a fixed offset from its base word in the prefix rows, so lanes
 * whose bases differ modulo 32 never conflict. The agents are sorted by that bank (a count, a
 * scan of the 32 counts, a placement), and sorted agent p goes to warp p % nw, lane p / nw, of
 * the nw = ceil(n / 32) warps that serve them: each warp gets about one agent per bank. */
__device__ __forceinline__ uint32_t tiny_bank(uint32_t c, const gpu_hz_geom &g)
{
    const uint32_t x = c % (uint32_t)g.w, y = c / (uint32_t)g.w;
    return (y * (uint32_t)g.PW + x + (uint32_t)g.L) & 31u;
}

/* Counts agent q (cell c) into its bank; its rank there, with the bank, goes to *slot. */
__device__ __forceinline__ void tiny_deal_count(uint32_t c, const gpu_hz_geom &g,
                                                unsigned *bank_count, uint32_t *slot)
{
    const uint32_t b = tiny_bank(c, g);
    *slot = atomicAdd(&bank_count[b], 1u) | b << 16;
}

/* By warp 0: the banks' counts become their starts, and are zeroed for the next count. */
__device__ __forceinline__ void tiny_deal_scan(unsigned *bank_count, unsigned *bank_start)
{
    if (threadIdx.x >= 32)
        return;
    const unsigned c = bank_count[threadIdx.x];
    unsigned inc = c;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned u = __shfl_up_sync(FULL_MASK, inc, o);
        if ((int)threadIdx.x >= o)
            inc += u;
    }
    bank_start[threadIdx.x] = inc - c;
    bank_count[threadIdx.x] = 0;
}

/* Agent q's place in the deal from its slot (tiny_deal_count) and the banks' starts. */
__device__ __forceinline__ void tiny_deal_place(uint32_t q, uint32_t slot, int nw,
                                                const unsigned *bank_start, uint32_t *deal)
{
    const uint32_t p = bank_start[slot >> 16] + (slot & 0xffffu);
    deal[(p % (uint32_t)nw) * 32u + p / (uint32_t)nw] = q;
}

/* A step's statistics in the one-block kernel, from the step's final field F (every thread, after
 * the step's last barrier; ends with one): the column sums in row order, a thread per column,
 * into colsum; the cells' checksum terms and max (gpu_cell_terms) and the agents' terms
 * (sim_checksum_agent), with the residual res of each thread, gathered in *sc and stored with
 * the step's moved into *out; *sc is zeroed again. */
__device__ __forceinline__ void tiny_stats(const tiny_args &a, const float *F, const uint32_t *id,
                                           const uint32_t *cell, float res, double *colsum,
                                           gpu_ctl *sc, gpu_ctl *out)
{
    const int w = a.g.w, h = a.g.h, cells = w * h, tid = (int)threadIdx.x, nt = (int)blockDim.x;
    for (int x = tid; x < w; x += nt) {
        double acc = 0.0;
        for (int y = 0; y < h; y++)
            acc += (double)F[y * w + x];
        colsum[x] = acc;
    }
    gpu_terms t = gpu_terms_none();
    for (int i = tid; i < cells; i += nt)
        gpu_cell_terms(t, (unsigned long long)i * SIM_CHECKSUM_GOLDEN, F[i]);
    unsigned long long cs = t.cs;
    unsigned mk = gpu_terms_key(t);
    for (int q = tid; q < a.c.n; q += nt)
        cs += gpu_checksum_agent(id[q], cell[q]);
    cs = gpu_warp_sum64(cs);
    mk = __reduce_max_sync(FULL_MASK, mk);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        res = fmaxf(res, __shfl_xor_sync(FULL_MASK, res, o));
    if ((tid & 31) == 0) {
        atomicAdd(&sc->checksum, cs);
        atomicMax(&sc->max_key, mk);
        atomicMax(&sc->residual, __float_as_uint(res)); /* non-negative: bits in float order */
    }
    __syncthreads();
    if (tid == 0) {
        out->checksum = sc->checksum;
        out->max_key = sc->max_key;
        out->residual = sc->residual;
        sc->checksum = 0;
        sc->max_key = 0;
        sc->residual = 0;
    }
}

template <bool SMALL>
__global__ void __launch_bounds__(GPU_TINY_THREADS, 1) tiny_kernel(tiny_args a, tiny_layout l)
{
    extern __shared__ uint4 tiny_smem[];
    __shared__ int s_hwp[2 * SIM_MAX_RADIUS + 5];
    __shared__ unsigned s_moved, s_bank_count[32], s_bank_start[32];
    __shared__ gpu_ctl s_ctl; /* a step's statistics, gathered (tiny_stats) */
    char *base = reinterpret_cast<char *>(tiny_smem);
    unsigned long long *claim = reinterpret_cast<unsigned long long *>(base + l.claim);
    float *F = reinterpret_cast<float *>(base + l.field[0]);     /* the current field */
    float *other = reinterpret_cast<float *>(base + l.field[1]); /* a sweep's output */
    uint32_t *I = reinterpret_cast<uint32_t *>(base + l.prefix);
    int *rowmap = reinterpret_cast<int *>(base + l.rowmap);
    int *colmap = reinterpret_cast<int *>(base + l.colmap);
    uint32_t *occ = reinterpret_cast<uint32_t *>(base + l.occ);
    unsigned long long *key = reinterpret_cast<unsigned long long *>(base + l.key);
    uint32_t *id = reinterpret_cast<uint32_t *>(base + l.id);
    uint32_t *cell = reinterpret_cast<uint32_t *>(base + l.cell);
    uint32_t *target = reinterpret_cast<uint32_t *>(base + l.target);
    uint32_t *deal = reinterpret_cast<uint32_t *>(base + l.deal);
    uint32_t *count = reinterpret_cast<uint32_t *>(base + l.count);
    const gpu_hz_geom &g = a.g;
    const int cells = g.w * g.h, words = (cells + 31) >> 5, nt = (int)blockDim.x;
    const int tid = (int)threadIdx.x, nw = (a.c.n + 31) / 32;
    gpu_hz_tile t;
    t.tx0 = t.ty0 = 0;
    t.ox = -g.L;
    t.oy = -g.R;
    /* a sweep's thread mapping: column x, a strip of `per` rows from y0 (threads past the
     * strips idle); the width is at most GPU_TINY_PW_MAX < blockDim */
    const int strips = nt / g.w, per = (g.h + strips - 1) / strips;
    const int sx = tid % g.w, sy0 = tid / g.w < strips ? tid / g.w * per : g.h;
    const int sy1 = sy0 + per < g.h ? sy0 + per : g.h;

    gpu_hz_block_halfwidths(s_hwp, g.r);
    for (int i = tid; i < g.RS; i += nt)
        rowmap[i] = tiny_axis(i, g.R, g.h, g.periodic);
    for (int j = tid; j < g.PW; j += nt)
        colmap[j] = tiny_axis(j, g.L, g.w, g.periodic);
    for (int i = tid; i < cells; i += nt) {
        claim[i] = 0;
        F[i] = a.c.field[i];
    }
    for (int i = tid; i < words; i += nt)
        occ[i] = a.c.occ[i];
    if (tid < 32)
        s_bank_count[tid] = 0;
    if (tid == 0) {
        s_moved = 0;
        memset(&s_ctl, 0, sizeof s_ctl);
    }
    __syncthreads();
    for (int q = tid; q < a.c.n; q += nt) {
        id[q] = a.ids[q];
        cell[q] = a.bcells[q];
        tiny_deal_count(cell[q], g, s_bank_count, &target[q]);
    }
    __syncthreads();
    tiny_deal_scan(s_bank_count, s_bank_start);
    __syncthreads();
    for (int q = tid; q < a.c.n; q += nt)
        tiny_deal_place(q, target[q], nw, s_bank_start, deal);
    unsigned long long step = *a.c.d_step;
    int slot = 0; /* the next column-sum slot */
    long long *prof = tid == 0 ? a.c.prof : NULL;
    if (prof)
        *prof++ = clock64();
    __syncthreads();

    for (int k = 0; k < a.c.steps; k++, step++) {
        /* sense, decide, claim */
        const tiny_region_groups group = {F, rowmap, colmap, g.w, (g.w & 3) == 0};
        load_region<SMALL>(I, g, group);
        __syncthreads();
        if (prof)
            *prof++ = clock64();
        for (int j = tid; j < nw * 32; j += nt) {
            if ((j & 31) * nw + (j >> 5) >= a.c.n)
                continue; /* no agent dealt here */
            const uint32_t q = deal[j], c = cell[q];
            const int x = (int)(c % (uint32_t)g.w), y = (int)(c / (uint32_t)g.w);
            int64_t s[SIM_NCAND];
            if (SMALL && g.r == a.rc) /* the radius compiled in, as in the tile kernel */
                gpu_hz_block_agent_sums<GPU_HMODE_SPARSE, SMALL, GPU_HZ_RC>(I, NULL, g, s_hwp, t,
                                                                          x, y, s);
            else
                gpu_hz_block_agent_sums<GPU_HMODE_SPARSE, SMALL>(I, NULL, g, s_hwp, t, x, y, s);
            target[q] = gpu_hz_decide_claim<false>(a.c.seed, step, a.c.threshold, occ, claim, id[q],
                                                   x, y, g.w, g.h, g.periodic, s, &key[q]);
        }
        __syncthreads();
        if (prof)
            *prof++ = clock64();

        /* move, deposit */
        unsigned moved = 0;
        for (int q = tid; q < a.c.n; q += nt) {
            const uint32_t c = cell[q], to = target[q];
            int mv;
            const uint32_t fin = gpu_step_move_cell(c, to, to == c ? 0ull : key[q], claim, occ,
                                                    &mv);
            cell[q] = fin;
            F[fin] = SIM_FADD(F[fin], a.c.deposit);
            moved += (unsigned)mv;
            tiny_deal_count(fin, g, s_bank_count, &target[q]); /* for the next step's deal */
        }
        moved = __reduce_add_sync(FULL_MASK, moved);
        if ((tid & 31) == 0 && moved)
            atomicAdd(&s_moved, moved);
        __syncthreads();
        if (tid == 0) {
            a.c.ring[k].moved = s_moved;
            s_moved = 0;
        }
        tiny_deal_scan(s_bank_count, s_bank_start);
        __syncthreads();
        /* beside the first sweep (or the decay): the deal, and the winners' claim words reset
         * (every agent's cell: the others' words are 0 already) once no loser reads them */
        for (int q = tid; q < a.c.n; q += nt) {
            tiny_deal_place(q, target[q], nw, s_bank_start, deal);
            claim[cell[q]] = 0;
        }
        if (prof)
            *prof++ = clock64();

        /* diffuse: sweeps from one buffer into the other, or the decay in place */
        if (a.c.sweeps == 0) {
            if (a.c.decay)
                for (int i = tid; i < cells; i += nt)
                    F[i] = SIM_FMUL(F[i], a.c.jac.keep);
            __syncthreads();
            if (prof)
                *prof++ = clock64();
        }
        const bool stats = (a.want[k >> 5] >> (k & 31)) & 1u;
        float res = 0.0f; /* the last sweep's max |T' - T| (the CPU's "if (d > m) m = d") */
        for (int sw = 1; sw <= a.c.sweeps; sw++) {
            const bool last = sw == a.c.sweeps, decay = a.c.decay && last;
            for (int y = sy0; y < sy1; y++) {
                const float v = res_jacobi_cell(a.c.jac, F, sx, y, false);
                if (stats && last)
                    gpu_res_update(res, v, F[y * g.w + sx]);
                other[y * g.w + sx] = decay ? SIM_FMUL(v, a.c.jac.keep) : v;
            }
            float *tmp = F;
            F = other;
            other = tmp;
            __syncthreads();
            if (prof)
                *prof++ = clock64();
        }
        if (stats) {
            tiny_stats(a, F, id, cell, res, a.colsum + (size_t)slot * g.w, &s_ctl, &a.c.ring[k]);
            slot++;
        }
    }

    /* the state back: field, bitmap, cells by id, the bins (counted, placed by a serial scan) */
    for (int i = tid; i < cells; i += nt)
        a.c.field[i] = F[i];
    for (int i = tid; i < words; i += nt)
        a.c.occ[i] = occ[i];
    const int ntiles = a.c.bg.ntiles;
    for (int i = tid; i <= ntiles; i += nt)
        count[i] = 0;
    __syncthreads();
    for (int q = tid; q < a.c.n; q += nt) {
        a.c.cells[id[q]] = cell[q];
        target[q] = atomicAdd(&count[gpu_bins_tile_of(cell[q], a.c.bg)], 1u); /* rank in its tile */
    }
    __syncthreads();
    if (tid == 0) {
        uint32_t acc = 0;
        for (int i = 0; i < ntiles; i++) {
            const uint32_t c = count[i];
            count[i] = acc;
            a.begin[i] = acc;
            acc += c;
        }
        a.begin[ntiles] = acc;
        *a.c.d_step = step;
    }
    __syncthreads();
    for (int q = tid; q < a.c.n; q += nt) {
        const uint32_t at = count[gpu_bins_tile_of(cell[q], a.c.bg)] + target[q];
        a.ids[at] = id[q];
        a.bcells[at] = cell[q];
    }
}

typedef void (*tiny_kernel_fn)(tiny_args, tiny_layout);

static tiny_kernel_fn tiny_kernel_for(const gpu_hz_geom &g)
{
    return g.small ? tiny_kernel<true> : tiny_kernel<false>;
}

int gpu_tiny_fit(int w, int h, int periodic, int r, int64_t n, int ntiles, gpu_hz_geom *g,
                 size_t *bytes, int *room, sim_err *err)
{
    *bytes = 0;
    if (room)
        *room = 0;
    if (n <= 0)
        return SIM_OK;
    gpu_hz_geometry_whole(w, h, periodic, r, g);
    if (g->PW > GPU_TINY_PW_MAX)
        return SIM_OK;
    const tiny_layout l = tiny_layout_of(*g, n, ntiles);
    int dev = 0, optin = 0;
    GPU_CHECK(err, cudaGetDevice(&dev));
    GPU_CHECK(err, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    cudaFuncAttributes fa;
    GPU_CHECK(err, cudaFuncGetAttributes(&fa, tiny_kernel_for(*g)));
    if (l.bytes + fa.sharedSizeBytes <= (size_t)optin)
        *bytes = l.bytes;
    if (room)
        *room = optin - (int)fa.sharedSizeBytes;
    return SIM_OK;
}

/* Plans the one-block kernel (st->tiny_smem, st->tiny_geom) where the tuning wants it and the
 * world fits it (gpu_tiny_fit), and lets it take the shared memory. */
static int tiny_plan(gpu_state *st, sim_err *err)
{
    st->tiny_smem = 0;
    const int wanted = st->tune.resident == GPU_RES_TINY ||
                       (st->tune.resident == GPU_RES_AUTO && st->cells <= GPU_TINY_CELLS_AUTO);
    if (!wanted)
        return SIM_OK;
    size_t bytes = 0;
    int room = 0;
    GPU_TRY(gpu_tiny_fit(st->w, st->h, st->periodic, st->sc.radius, st->n, st->geom.ntiles,
                         &st->tiny_geom, &bytes, &room, err));
    if (bytes == 0)
        return SIM_OK;
    /* The device's limit, not this world's need: instances of other sizes share the kernel. */
    GPU_CHECK(err, cudaFuncSetAttribute(tiny_kernel_for(st->tiny_geom),
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, room));
    st->tiny_smem = bytes;
    return SIM_OK;
}

/* n steps of the one-block kernel on st->stream (the ring zeroed, the step index uploaded), then
 * the results as gpu_step_resident_run gives them; want[k] (NULL: none) asks for step k's
 * statistics, into the next column-sum slot (at most st->ring_cap of them). */
static int tiny_run(gpu_state *st, int64_t step, int n, const uint8_t *want, sim_stats *out,
                    sim_err *err)
{
    gpu_bins_agents *b = &st->ab;
    tiny_args a;
    memset(&a, 0, sizeof a);
    a.c = res_step_of(st, n);
    a.g = st->tiny_geom;
    a.ids = b->ids[b->cur];
    a.bcells = b->cells[b->cur];
    a.begin = b->begin[b->cur];
    a.colsum = st->d_colsum_ring;
    a.rc = st->plan.rc == GPU_HZ_RC ? GPU_HZ_RC : -1; /* off with HORIZON_HZ_RC=0 there too */
    int nstats = 0;
    for (int k = 0; want && k < n; k++)
        if (want[k]) {
            a.want[k >> 5] |= 1u << (k & 31);
            nstats++;
        }
    const tiny_layout l = tiny_layout_of(a.g, st->n, a.c.bg.ntiles);
    const int per_step = 3 + (a.c.sweeps > 0 ? a.c.sweeps : 1);
    GPU_TRY(prof_begin(n, per_step, &a.c.prof, err));
    tiny_kernel_for(a.g)<<<1, GPU_TINY_THREADS, l.bytes, st->stream>>>(a, l);
    GPU_CHECK_LAUNCH(err, st->stream);
    GPU_TRY(gpu_step_batch_results(st, step, n, want, nstats, out, err));
    return prof_report(a.c.prof, n, per_step, 1, err);
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
    GPU_TRY(tiny_plan(st, err));
    if (st->tiny_smem > 0)
        return SIM_OK;
    /* Not planned where it would not be used: the kernel's attributes and occupancy are asked
     * for only in the worlds that run it (creation stays as cheap as it was for the others). */
    const int wanted = st->tune.resident == GPU_RES_ON || st->tune.resident == GPU_RES_TINY ||
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
     * run faster (GPU_RES_CELLS_MAX). The one-block kernel serves every batch. */
    if (st->tiny_smem > 0)
        return 1;
    if (st->tune.resident == GPU_RES_AUTO && st->batched > GPU_BATCH_RUN_AFTER)
        return 0;
    return st->res_blocks > 0;
}

int gpu_step_resident_run(gpu_state *st, int64_t step, int n, const uint8_t *want,
                          sim_stats *out, sim_err *err)
{
    cudaStream_t s = st->stream;
    GPU_TRY(gpu_step_upload(st, step, err));
    GPU_CHECK(err, cudaMemsetAsync(st->d_ctl_ring, 0, (size_t)n * sizeof(gpu_ctl), s));
    if (st->tiny_smem > 0) {
        /* the field stays in d_field, the bins in their set */
        return tiny_run(st, step, n, want, out, err);
    }
    gpu_bins_agents *b = &st->ab;
    res_args a;
    memset(&a, 0, sizeof a);
    a.c = res_step_of(st, n);
    a.g = st->geom;
    a.spare = st->d_spare;
    a.claim = st->d_claim;
    a.key = st->d_key;
    a.target = st->d_target;
    for (int i = 0; i < 2; i++) {
        a.ids[i] = b->ids[i];
        a.bcells[i] = b->cells[i];
        a.begin[i] = b->begin[i];
    }
    a.count = b->count;
    a.rank = b->rank;
    a.set = b->cur;
    const int per_step = 3 + (st->sc.sweeps > 2 ? st->sc.sweeps - 1 : 1);
    GPU_TRY(prof_begin(n, per_step, &a.c.prof, err));
    void *args[] = {&a};
    /* One tile's shared memory whatever the plan's mapping: blocks here take single tiles. */
    GPU_CHECK(err, cudaLaunchCooperativeKernel((const void *)kernel_for(st), dim3(st->res_blocks),
                                               dim3(GPU_HZ_THREADS), args, st->plan.tile_smem,
                                               s));
    GPU_TRY(gpu_step_batch_results(st, step, n, NULL, 0, out, err));
    GPU_TRY(prof_report(a.c.prof, n, per_step, st->res_blocks, err));
    /* Each sweep swapped the buffers; the bins set flipped every step. */
    if (st->sc.sweeps > 0 && ((int64_t)st->sc.sweeps * n) % 2) {
        float *t = st->d_field;
        st->d_field = st->d_spare;
        st->d_spare = t;
    }
    if (n % 2)
        b->cur ^= 1;
    return SIM_OK;
}
