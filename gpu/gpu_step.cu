/* gpu_step.cu - one step of DESIGN.md on the device, and its capture in a CUDA graph.
 *
 * Order (the same results as sim_cpu.c): tile-sum kernel over this step's bins (sense, decide,
 * claim with a 64-bit atomicMax on the target's claim word) -> move (winners move, the
 * occupancy bitmap follows them, every agent is counted into its new tile) -> Jacobi passes with
 * the deposit folded into the first one when it is fused (otherwise the move kernel deposits) and
 * decay in the last; meanwhile, on a second stream, a scan of the tile counts and a scatter bin
 * the agents for the next step -> statistics when asked -> the control block to the host.
 *
 * Occupancy and claims: bit c of the bitmap says whether cell c holds an agent; during the
 * decide kernel that is the occupancy at the start of the step, which is what "claim an empty
 * target" asks. Claim words are 0 between steps; every claimed word has exactly one winner (the
 * maximum is one claimer's unique key), and the winner resets the word to 0, so no reset pass is
 * needed. Losers read the winner's key or 0, never their own (keys are never 0).
 *
 * Bins: an agent moves at most one cell a step, so its tile rarely changes; instead of sorting
 * all agents every step, the move kernel (which knows each agent's final cell) counts them per
 * tile with warp-aggregated atomics (agents arrive in tile order, so a warp touches one or two
 * tiles) and notes each agent's rank in its tile; a one-block scan turns the counts into run
 * starts and a scatter writes ids and cells into the other set of bins. The order inside a tile
 * follows the atomics; nothing depends on it (every result is a function of the agent alone).
 *
 * The step's launches are captured once per (field buffer, bins set, statistics) and replayed.
 * The step index lives in d_ctl->step, which the graph advances (in the scan kernel, after the
 * decide kernel has read it), so the host uploads it only when it differs (first step, resume);
 * the control block comes back by a copy inside the graph. */
#include <cub/block/block_scan.cuh>

#include <stdlib.h>
#include <string.h>

#include "gpu_alloc.h"
#include "gpu_check.h"
#include "gpu_policy.h"
#include "gpu_state.h"

extern "C" {
#include "sim_rules.h"
}

#define FULL_MASK 0xffffffffu

/* Tile keys of the horizon tiling (gpu_hz_geom): tile (x / T, y / T) of a cell, row-major. */
typedef struct bin_geom {
    int w, T, ntx, ntiles;
} bin_geom;

static bin_geom bin_geom_of(const gpu_state *st)
{
    bin_geom b;
    b.w = st->geom.w;
    b.T = st->geom.T;
    b.ntx = st->geom.ntx;
    b.ntiles = st->geom.ntiles;
    return b;
}

__device__ __forceinline__ uint32_t tile_of(uint32_t c, const bin_geom &b)
{
    const uint32_t x = c % (uint32_t)b.w, y = c / (uint32_t)b.w;
    return (y / (uint32_t)b.T) * (uint32_t)b.ntx + x / (uint32_t)b.T;
}

/* Counts a warp's agents into their tiles: every lane of the warp calls it; a live lane's agent
 * q gets rank[q], its place among the agents of its tile. Lanes with the same tile share one
 * atomicAdd (their leader's), ranks follow the lane order within the warp. */
__device__ __forceinline__ void bin_count(bool live, uint32_t tile, uint32_t *count,
                                          uint32_t *rank, int64_t q)
{
    const unsigned peers = __match_any_sync(FULL_MASK, live ? tile : 0xffffffffu);
    const int lane = (int)(threadIdx.x & 31), leader = __ffs((int)peers) - 1;
    uint32_t base = 0;
    if (live && lane == leader)
        base = atomicAdd(&count[tile], (uint32_t)__popc(peers));
    base = __shfl_sync(FULL_MASK, base, leader);
    if (live)
        rank[q] = base + (uint32_t)__popc(peers & ((1u << lane) - 1u));
}

/* Thread per agent in tile order q (the order of the tile-sum kernel, so the claim words a warp
 * touches are close together). A claimer whose key is still the target's claim word wins: it
 * resets the word, moves (its old cell is vacated in the bitmap, the target occupied: bits only
 * it changes, through atomics because neighbours share the word). No other thread writes those
 * cells' words in this kernel: the target was empty at the start (no one leaves it) and the old
 * cell was occupied (no one claimed it). Then: the deposit on the final cell (one agent per
 * cell) unless `fold` leaves it to the first Jacobi pass; target[q] becomes the final cell; the
 * agent is counted into its new tile. */
__global__ void __launch_bounds__(GPU_EW_THREADS)
move_kernel(int64_t n, const uint32_t *__restrict__ ids, const uint32_t *__restrict__ cellq,
            uint32_t *target, const unsigned long long *__restrict__ key,
            unsigned long long *claim, uint32_t *occ, uint32_t *cells, float *field,
            float deposit, int fold, bin_geom bg, uint32_t *count, uint32_t *rank,
            unsigned long long *moved)
{
    const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = q < n;
    int mv = 0;
    uint32_t c = 0;
    if (live) {
        const uint32_t t = target[q];
        c = cellq[q];
        if (t != c && claim[t] == key[q]) {
            claim[t] = 0;
            atomicAnd(&occ[c >> 5], ~(1u << (c & 31)));
            atomicOr(&occ[t >> 5], 1u << (t & 31));
            cells[ids[q]] = t;
            c = t;
            mv = 1;
        }
        if (!fold)
            field[c] = SIM_FADD(field[c], deposit);
        target[q] = c;
    }
    bin_count(live, live ? tile_of(c, bg) : 0u, count, rank, q);
    const unsigned votes = __ballot_sync(FULL_MASK, mv);
    if ((threadIdx.x & 31) == 0 && votes)
        atomicAdd(moved, (unsigned long long)__popc(votes));
}

/* Counts agents q with final cells fin[q] into their tiles (create, and the bench's binning
 * part). */
__global__ void __launch_bounds__(GPU_EW_THREADS)
bin_count_kernel(int64_t n, const uint32_t *__restrict__ fin, bin_geom bg, uint32_t *count,
                 uint32_t *rank)
{
    const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = q < n;
    const uint32_t c = live ? fin[q] : 0u;
    bin_count(live, tile_of(c, bg), count, rank, q);
}

/* One block: begin[t] = count[0] + .. + count[t-1] (begin[ntiles] = all agents), then the counts
 * are zeroed for the next step; `step` (not NULL) advances the step index. Tiles go
 * BIN_SCAN_THREADS * BIN_SCAN_ITEMS at a time (4096: one round at the large scenario). */
#define BIN_SCAN_THREADS 1024
#define BIN_SCAN_ITEMS 4
typedef cub::BlockScan<uint32_t, BIN_SCAN_THREADS> bin_scan_t;

__global__ void __launch_bounds__(BIN_SCAN_THREADS)
bin_scan_kernel(uint32_t *count, int ntiles, uint32_t *begin, unsigned long long *step)
{
    __shared__ typename bin_scan_t::TempStorage tmp;
    uint32_t carry = 0;
    for (int base = 0; base < ntiles; base += BIN_SCAN_THREADS * BIN_SCAN_ITEMS) {
        const int i0 = base + (int)threadIdx.x * BIN_SCAN_ITEMS;
        uint32_t v[BIN_SCAN_ITEMS];
#pragma unroll
        for (int j = 0; j < BIN_SCAN_ITEMS; j++)
            v[j] = i0 + j < ntiles ? count[i0 + j] : 0u;
        uint32_t total = 0;
        bin_scan_t(tmp).ExclusiveSum(v, v, total);
#pragma unroll
        for (int j = 0; j < BIN_SCAN_ITEMS; j++)
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

/* Thread per agent q of the old order: its slot in the new bins is its tile's start plus its
 * rank. ids NULL: the old order is the id order (create). Every slot below n is written once
 * when the counts, ranks and starts belong together (the check keeps an inconsistent bench
 * state in bounds). */
__global__ void __launch_bounds__(GPU_EW_THREADS)
bin_scatter_kernel(int64_t n, const uint32_t *__restrict__ ids, const uint32_t *__restrict__ fin,
                   const uint32_t *__restrict__ rank, const uint32_t *__restrict__ begin,
                   bin_geom bg, uint32_t *__restrict__ ids_out, uint32_t *__restrict__ cells_out)
{
    const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= n)
        return;
    const uint32_t c = fin[q];
    const uint32_t slot = begin[tile_of(c, bg)] + rank[q];
    if ((int64_t)slot < n) {
        ids_out[slot] = ids ? ids[q] : (uint32_t)q;
        cells_out[slot] = c;
    }
}

__global__ void mark_kernel(int64_t n, const uint32_t *__restrict__ cells, uint32_t *occ)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const uint32_t c = cells[i];
        atomicOr(&occ[c >> 5], 1u << (c & 31));
    }
}

static unsigned ew_blocks(int64_t n)
{
    return (unsigned)((n + GPU_EW_THREADS - 1) / GPU_EW_THREADS);
}

static size_t occ_words(int64_t cells)
{
    return (size_t)((cells + 31) / 32);
}

size_t gpu_step_bins_bytes(int64_t n, int64_t cells, int ntiles)
{
    const size_t na = (size_t)(n > 0 ? n : 1), nt = (size_t)ntiles;
    return occ_words(cells) * sizeof(uint32_t) + na * 5 * sizeof(uint32_t) +
           (2 * (nt + 1) + nt) * sizeof(uint32_t);
}

int gpu_step_alloc(gpu_state *st, sim_err *err)
{
    gpu_agent_bins *b = &st->ab;
    const size_t na = (size_t)(st->n > 0 ? st->n : 1), nt = (size_t)st->geom.ntiles;
    GPU_TRY(gpu_alloc(st, (void **)&st->d_occ, occ_words(st->cells) * sizeof(uint32_t),
                      "occupancy", err));
    for (int k = 0; k < 2; k++) {
        GPU_TRY(gpu_alloc(st, (void **)&b->ids[k], na * sizeof(uint32_t), "agent bins", err));
        GPU_TRY(gpu_alloc(st, (void **)&b->cells[k], na * sizeof(uint32_t), "agent bins", err));
        GPU_TRY(gpu_alloc(st, (void **)&b->begin[k], (nt + 1) * sizeof(uint32_t), "agent bins",
                          err));
    }
    GPU_TRY(gpu_alloc(st, (void **)&b->count, nt * sizeof(uint32_t), "agent bins", err));
    GPU_TRY(gpu_alloc(st, (void **)&b->rank, na * sizeof(uint32_t), "agent bins", err));
    GPU_CHECK(err, cudaStreamCreateWithFlags(&st->side, cudaStreamNonBlocking));
    GPU_CHECK(err, cudaEventCreateWithFlags(&st->ev_fork, cudaEventDisableTiming));
    GPU_CHECK(err, cudaEventCreateWithFlags(&st->ev_join, cudaEventDisableTiming));
    return SIM_OK;
}

void gpu_step_free(gpu_state *st)
{
    gpu_agent_bins *b = &st->ab;
    for (int k = 0; k < 2; k++) {
        gpu_alloc_free(b->ids[k]);
        gpu_alloc_free(b->cells[k]);
        gpu_alloc_free(b->begin[k]);
    }
    gpu_alloc_free(b->count);
    gpu_alloc_free(b->rank);
    gpu_alloc_free(st->d_occ);
    if (st->ev_fork)
        cudaEventDestroy(st->ev_fork);
    if (st->ev_join)
        cudaEventDestroy(st->ev_join);
    if (st->side)
        cudaStreamDestroy(st->side);
    memset(b, 0, sizeof *b);
    st->d_occ = NULL;
    st->ev_fork = st->ev_join = NULL;
    st->side = NULL;
}

/* Next bins from the counts and ranks of the agents in the order of set `from` (final cells in
 * d_target): run starts into set from ^ 1 (zeroing the counts), then ids and cells. */
static int step_rebin(gpu_state *st, int from, unsigned long long *d_step, cudaStream_t s,
                      sim_err *err)
{
    gpu_agent_bins *b = &st->ab;
    const int to = from ^ 1;
    bin_scan_kernel<<<1, BIN_SCAN_THREADS, 0, s>>>(b->count, st->geom.ntiles, b->begin[to],
                                                   d_step);
    GPU_CHECK_LAUNCH(err, s);
    bin_scatter_kernel<<<ew_blocks(st->n), GPU_EW_THREADS, 0, s>>>(
        st->n, b->ids[from], st->d_target, b->rank, b->begin[to], bin_geom_of(st), b->ids[to],
        b->cells[to]);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

int gpu_step_mark(gpu_state *st, sim_err *err)
{
    cudaStream_t s = st->stream;
    gpu_agent_bins *b = &st->ab;
    GPU_CHECK(err, cudaMemsetAsync(st->d_claim, 0, (size_t)st->cells * sizeof *st->d_claim, s));
    GPU_CHECK(err, cudaMemsetAsync(st->d_occ, 0, occ_words(st->cells) * sizeof(uint32_t), s));
    b->cur = 0;
    st->dev_step_ok = 0;
    if (st->n <= 0)
        return SIM_OK;
    const bin_geom bg = bin_geom_of(st);
    GPU_CHECK(err, cudaMemsetAsync(b->count, 0, (size_t)st->geom.ntiles * sizeof(uint32_t), s));
    mark_kernel<<<ew_blocks(st->n), GPU_EW_THREADS, 0, s>>>(st->n, st->d_cells, st->d_occ);
    GPU_CHECK_LAUNCH(err, s);
    /* Set 0 from the agents in id order. */
    bin_count_kernel<<<ew_blocks(st->n), GPU_EW_THREADS, 0, s>>>(st->n, st->d_cells, bg,
                                                                 b->count, b->rank);
    GPU_CHECK_LAUNCH(err, s);
    bin_scan_kernel<<<1, BIN_SCAN_THREADS, 0, s>>>(b->count, st->geom.ntiles, b->begin[0], NULL);
    GPU_CHECK_LAUNCH(err, s);
    bin_scatter_kernel<<<ew_blocks(st->n), GPU_EW_THREADS, 0, s>>>(
        st->n, NULL, st->d_cells, b->rank, b->begin[0], bg, b->ids[0], b->cells[0]);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

static int step_decide(gpu_state *st, const float *field, int queue_zeroed, sim_err *err)
{
    const gpu_agent_bins *b = &st->ab;
    gpu_hz_agents ag;
    ag.ids = b->ids[b->cur];
    ag.begin = b->begin[b->cur];
    ag.cells = b->cells[b->cur];
    ag.by_q = 1;
    gpu_decide_args a;
    a.seed = st->sc.seed;
    a.threshold = st->threshold;
    a.d_step = &st->d_ctl->step;
    a.d_claim = st->d_claim;
    a.d_occ = st->d_occ;
    a.d_target = st->d_target;
    a.d_key = st->d_key;
    a.queue_zeroed = queue_zeroed;
    return gpu_hz_decide(&st->plan, &ag, field, &a, &st->d_ctl->queue, st->stream, err);
}

static int step_move(gpu_state *st, float *field, int fold, sim_err *err)
{
    gpu_agent_bins *b = &st->ab;
    move_kernel<<<ew_blocks(st->n), GPU_EW_THREADS, 0, st->stream>>>(
        st->n, b->ids[b->cur], b->cells[b->cur], st->d_target, st->d_key, st->d_claim, st->d_occ,
        st->d_cells, field, st->sc.deposit, fold, bin_geom_of(st), b->count, b->rank,
        &st->d_ctl->moved);
    GPU_CHECK_LAUNCH(err, st->stream);
    return SIM_OK;
}

/* The deposit goes into the first Jacobi pass when that pass is fused. */
static int step_folds(const gpu_state *st)
{
    return st->n > 0 && gpu_jacobi_first_pass(st->sc.sweeps, st->tune.fuse_max) >= 2;
}

int gpu_step_enqueue(gpu_state *st, float **cur, float **other, int want_stats, sim_err *err)
{
    cudaStream_t s = st->stream;
    const int fold = step_folds(st);
    GPU_TRY(gpu_ctl_reset(st->d_ctl, s, err)); /* also zeroes the tile queue */
    if (st->n > 0) {
        GPU_TRY(step_decide(st, *cur, 1, err));
        GPU_TRY(step_move(st, *cur, fold, err));
        GPU_CHECK(err, cudaEventRecord(st->ev_fork, s));
        GPU_CHECK(err, cudaStreamWaitEvent(st->side, st->ev_fork, 0));
        GPU_TRY(step_rebin(st, st->ab.cur, &st->d_ctl->step, st->side, err));
        GPU_CHECK(err, cudaEventRecord(st->ev_join, st->side));
    }
    GPU_TRY(gpu_jacobi_run_dep(&st->jac, cur, other, st->sc.sweeps, st->tune.fuse_max,
                               st->sc.decay > 0.0f, fold ? st->d_occ : NULL, st->sc.deposit,
                               want_stats ? &st->d_ctl->residual : NULL, s, err));
    if (st->n > 0)
        GPU_CHECK(err, cudaStreamWaitEvent(s, st->ev_join, 0));
    if (want_stats) {
        GPU_TRY(gpu_stats_field(*cur, st->w, st->h, st->d_colsum, st->d_ctl, s, err));
        GPU_TRY(gpu_stats_agents(st->d_cells, st->n, st->d_ctl, s, err));
    }
    GPU_CHECK(err, cudaMemcpyAsync(&st->h_pin->ctl, st->d_ctl, sizeof(gpu_ctl),
                                   cudaMemcpyDeviceToHost, s));
    if (want_stats)
        GPU_CHECK(err, cudaMemcpyAsync(st->h_colsum, st->d_colsum, (size_t)st->w * sizeof(double),
                                       cudaMemcpyDeviceToHost, s));
    return SIM_OK;
}

int gpu_step_part(gpu_state *st, int part, sim_err *err)
{
    cudaStream_t s = st->stream;
    float *cur = st->d_field, *other = st->d_spare;
    const int fold = step_folds(st);
    st->dev_step_ok = 0;
    switch (part) {
    case GPU_PART_BIN:
        /* Count, scan and scatter alone (in the step the count is part of the move kernel and
         * the rest runs beside the diffusion): the agents of the previous step's order, whose
         * final cells d_target holds after a step, into the current set. */
        if (st->n == 0)
            return SIM_OK;
        bin_count_kernel<<<ew_blocks(st->n), GPU_EW_THREADS, 0, s>>>(
            st->n, st->d_target, bin_geom_of(st), st->ab.count, st->ab.rank);
        GPU_CHECK_LAUNCH(err, s);
        return step_rebin(st, st->ab.cur ^ 1, NULL, s, err);
    case GPU_PART_DECIDE:
        return st->n > 0 ? step_decide(st, cur, 0, err) : SIM_OK;
    case GPU_PART_MOVE:
        return st->n > 0 ? step_move(st, cur, fold, err) : SIM_OK;
    case GPU_PART_DIFFUSE:
        return gpu_jacobi_run_dep(&st->jac, &cur, &other, st->sc.sweeps, st->tune.fuse_max,
                                  st->sc.decay > 0.0f, fold ? st->d_occ : NULL, st->sc.deposit,
                                  NULL, s, err);
    default:
        GPU_TRY(gpu_stats_field(cur, st->w, st->h, st->d_colsum, st->d_ctl, s, err));
        return gpu_stats_agents(st->d_cells, st->n, st->d_ctl, s, err);
    }
}

void gpu_step_forget(gpu_state *st)
{
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++) {
                if (st->graph[i][j][k])
                    cudaGraphExecDestroy(st->graph[i][j][k]);
                st->graph[i][j][k] = NULL;
            }
}

/* Nodes and kernel nodes of a captured step (the bench prints them). */
static void count_nodes(gpu_state *st, cudaGraph_t g)
{
    size_t nn = 0;
    st->graph_nodes = st->graph_kernels = -1;
    if (cudaGraphGetNodes(g, NULL, &nn) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    cudaGraphNode_t *nodes = (cudaGraphNode_t *)malloc((nn ? nn : 1) * sizeof *nodes);
    if (!nodes)
        return;
    int kernels = 0;
    if (cudaGraphGetNodes(g, nodes, &nn) == cudaSuccess) {
        for (size_t i = 0; i < nn; i++) {
            cudaGraphNodeType t;
            if (cudaGraphNodeGetType(nodes[i], &t) == cudaSuccess && t == cudaGraphNodeTypeKernel)
                kernels++;
        }
        st->graph_nodes = (int)nn;
        st->graph_kernels = kernels;
    }
    cudaGetLastError();
    free(nodes);
}

/* Captures the step that starts from the current buffer and bins, with or without statistics. */
static int capture(gpu_state *st, int want_stats, cudaGraphExec_t *out, sim_err *err)
{
    float *cur = st->d_field, *other = st->d_spare;
    cudaGraph_t g = NULL;
    GPU_CHECK(err, cudaStreamBeginCapture(st->stream, cudaStreamCaptureModeThreadLocal));
    int rc = gpu_step_enqueue(st, &cur, &other, want_stats, err);
    cudaError_t e = cudaStreamEndCapture(st->stream, &g);
    if (rc != SIM_OK) {
        if (g)
            cudaGraphDestroy(g);
        cudaGetLastError();
        return rc;
    }
    if (e != cudaSuccess)
        return gpu_fail(err, e, __FILE__, __LINE__, "cudaStreamEndCapture");
    count_nodes(st, g);
    e = cudaGraphInstantiate(out, g, 0);
    cudaGraphDestroy(g);
    if (e != cudaSuccess)
        return gpu_fail(err, e, __FILE__, __LINE__, "cudaGraphInstantiate");
    return SIM_OK;
}

int gpu_step_run(gpu_state *st, int64_t step, int want_stats, sim_stats *out, sim_err *err)
{
    want_stats = want_stats != 0;
    const int parity = st->d_field == st->d_buf[1];
    cudaGraphExec_t *ge = &st->graph[parity][st->ab.cur][want_stats];
    if (!*ge)
        GPU_TRY(capture(st, want_stats, ge, err));

    if (!st->dev_step_ok || st->dev_step != (unsigned long long)step) {
        st->h_pin->step = (unsigned long long)step;
        GPU_CHECK(err, cudaMemcpyAsync(&st->d_ctl->step, &st->h_pin->step,
                                       sizeof st->h_pin->step, cudaMemcpyHostToDevice,
                                       st->stream));
    }
    st->dev_step_ok = 0; /* until the step is known to have run */
    GPU_CHECK(err, cudaGraphLaunch(*ge, st->stream));
    GPU_CHECK(err, cudaStreamSynchronize(st->stream));
    /* The graph advanced d_ctl->step when it binned agents (n > 0). */
    st->dev_step = (unsigned long long)step + (st->n > 0 ? 1ull : 0ull);
    st->dev_step_ok = 1;

    /* The graph ran gpu_jacobi_passes() passes, each swapping the buffers, and filled the other
     * set of bins. */
    if (st->sc.sweeps > 0 && gpu_jacobi_passes(st->sc.sweeps, st->tune.fuse_max) % 2) {
        float *t = st->d_field;
        st->d_field = st->d_spare;
        st->d_spare = t;
    }
    if (st->n > 0)
        st->ab.cur ^= 1;
    const gpu_ctl *c = &st->h_pin->ctl;
    out->moved = (int64_t)c->moved;
    if (want_stats) {
        double total = 0.0;
        for (int x = 0; x < st->w; x++)
            total += st->h_colsum[x];
        float res;
        memcpy(&res, &c->residual, sizeof res);
        out->field_total = total;
        out->field_mean = total / (double)st->cells;
        out->field_max = gpu_float_from_key(c->max_key);
        out->residual = res;
        out->checksum = c->checksum;
    }
    return SIM_OK;
}
