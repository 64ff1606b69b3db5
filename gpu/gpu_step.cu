/* gpu_step.cu - one step of DESIGN.md on the device, and its capture in a CUDA graph.
 *
 * Order (the same results as sim_cpu.c): tile-sum kernel over this step's bins (sense, decide,
 * claim with a 64-bit atomicMax on the target's claim word) -> move (winners move, the
 * occupancy bitmap follows them, every agent is counted into its new tile) -> Jacobi passes with
 * the deposit folded into the first one when it is fused (otherwise the move kernel deposits) and
 * decay in the last; meanwhile, on a second stream, a scan of the tile counts and a scatter bin
 * the agents for the next step (and, with statistics, hash them) -> statistics when asked -> the
 * control block to the host.
 *
 * Occupancy and claims: bit c of the bitmap says whether cell c holds an agent; during the
 * decide kernel that is the occupancy at the start of the step, which is what "claim an empty
 * target" asks. Claim words are 0 between steps; every claimed word has exactly one winner (the
 * maximum is one claimer's unique key), and the winner resets the word to 0, so no reset pass is
 * needed. Losers read the winner's key or 0, never their own (keys are never 0).
 *
 * Bins (gpu_bins.h, gpu_bins.cu): an agent moves at most one cell a step, so its tile rarely
 * changes; instead of sorting all agents every step, the move kernel (which knows each agent's
 * final cell) counts them per tile (gpu_bins_count_warp) and notes each agent's rank in its
 * tile; a scan (gpu_bins_agents_scan) then turns the counts into run starts and the step's
 * scatter puts ids and cells into the other set of bins. This file holds the step's own kernels
 * (move, scatter, occupancy marks) and the orchestration: the order of the phases, the graphs,
 * the read-back of the statistics.
 *
 * The step's launches are captured once per (field buffer, bins set, statistics, per step or
 * batched) and replayed; batches (gpu_step_batch.cu) may also capture runs of several steps.
 * The step index lives in d_ctl->step, which the graph advances (in the scan kernel, after the
 * decide kernel has read it), so the host uploads it only when it differs (first step, resume);
 * the control block comes back by a copy inside the graph. */
#include <stdlib.h>
#include <string.h>

#include "gpu_alloc.h"
#include "gpu_check.h"
#include "gpu_pdl.cuh"
#include "gpu_policy.h"
#include "gpu_state.h"
#include "gpu_stats.cuh"
#include "gpu_step_agent.cuh"

extern "C" {
#include "sim_rules.h"
}

#define FULL_MASK 0xffffffffu

/* Thread per agent in tile order q (the order of the tile-sum kernel, so the claim words a warp
 * touches are close together): the agent's move (gpu_step_move_agent), then it is counted into
 * its new tile and the warp's moves into `moved`. The statistics take nothing here: the agents'
 * terms come from the scatter (scatter_kernel), which runs beside the diffusion. */
__global__ void __launch_bounds__(GPU_EW_THREADS)
move_kernel(int64_t n, const uint32_t *__restrict__ ids, const uint32_t *__restrict__ cellq,
            uint32_t *target, const unsigned long long *__restrict__ key,
            unsigned long long *claim, uint32_t *occ, uint32_t *cells, float *field,
            float deposit, int fold, gpu_bins_geom bg, uint32_t *count, uint32_t *rank,
            unsigned long long *moved)
{
    gpu_pdl_wait(); /* the tile-sum kernel's targets and claims (gpu_pdl.cuh) */
    gpu_pdl_release();
    const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = q < n;
    int mv = 0;
    uint32_t c = 0;
    if (live)
        c = gpu_step_move_agent(q, ids, cellq, target, key, claim, occ, cells, field, deposit,
                                fold, &mv);
    gpu_bins_count_warp(live, live ? gpu_bins_tile_of(c, bg) : 0u, count, rank, q);
    const unsigned votes = __ballot_sync(FULL_MASK, mv);
    if ((threadIdx.x & 31) == 0 && votes)
        atomicAdd(moved, (unsigned long long)__popc(votes));
}

/* Thread per agent q of this step's order, on the side stream after the scan: (id, final cell
 * fin[q]) into the next bins (gpu_bins_scatter_one). terms (statistics folded into the step,
 * gpu_step_stats_fused): the agent's checksum term goes into terms->checksum, so that the
 * statistics need no pass over the agents; asnap (deferred statistics, gpu_defer): (id, final
 * cell) into slot pos[1] % cap of asnap instead. Here, beside the diffusion, the hashing is off
 * the step's chain of kernels; in the move kernel it cost the large scenario ~4 us a step. */
__global__ void __launch_bounds__(GPU_EW_THREADS)
scatter_kernel(int64_t n, const uint32_t *__restrict__ ids, const uint32_t *__restrict__ fin,
               const uint32_t *__restrict__ rank, const uint32_t *__restrict__ begin,
               gpu_bins_geom bg, uint32_t *__restrict__ ids_out, uint32_t *__restrict__ cells_out,
               gpu_ctl *terms, uint2 *asnap, const unsigned *pos, unsigned cap)
{
    gpu_pdl_wait(); /* the scan's run starts (gpu_pdl.cuh) */
    gpu_pdl_release();
    const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = q < n;
    uint32_t id = 0, c = 0;
    if (live) {
        id = ids[q];
        c = fin[q];
        gpu_bins_scatter_one(id, c, rank[q], begin, bg, n, ids_out, cells_out);
    }
    if (terms) /* the same for the whole grid */
        gpu_commit_sum_max(live ? gpu_checksum_agent(id, c) : 0ull, 0u, terms, 1);
    if (asnap && live)
        asnap[(size_t)(pos[1] % cap) * (size_t)n + q] = make_uint2(id, c);
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
    return occ_words(cells) * sizeof(uint32_t) + gpu_bins_agents_bytes(n, ntiles);
}

int gpu_step_alloc(gpu_state *st, sim_err *err)
{
    GPU_TRY(gpu_alloc(st, (void **)&st->d_occ, occ_words(st->cells) * sizeof(uint32_t),
                      "occupancy", err));
    GPU_TRY(gpu_bins_agents_alloc(&st->ab, st->n, st->geom.ntiles, &st->bytes, err));
    GPU_CHECK(err, cudaStreamCreateWithFlags(&st->side, cudaStreamNonBlocking));
    GPU_CHECK(err, cudaEventCreateWithFlags(&st->ev_fork, cudaEventDisableTiming));
    GPU_CHECK(err, cudaEventCreateWithFlags(&st->ev_join, cudaEventDisableTiming));
    GPU_CHECK(err, cudaStreamCreateWithFlags(&st->stats, cudaStreamNonBlocking));
    GPU_CHECK(err, cudaEventCreateWithFlags(&st->ev_stepped, cudaEventDisableTiming));
    GPU_CHECK(err, cudaEventCreateWithFlags(&st->ev_counted, cudaEventDisableTiming));
    return SIM_OK;
}

void gpu_step_free(gpu_state *st)
{
    gpu_bins_agents_free(&st->ab);
    gpu_alloc_free(st->d_occ);
    if (st->ev_fork)
        cudaEventDestroy(st->ev_fork);
    if (st->ev_join)
        cudaEventDestroy(st->ev_join);
    if (st->side)
        cudaStreamDestroy(st->side);
    if (st->ev_stepped)
        cudaEventDestroy(st->ev_stepped);
    if (st->ev_counted)
        cudaEventDestroy(st->ev_counted);
    if (st->stats)
        cudaStreamDestroy(st->stats);
    gpu_alloc_free(st->d_snap);
    cudaEvent_t *evs[4] = {&st->ev_at, &st->ev_snap, &st->ev_read[0], &st->ev_read[1]};
    for (int i = 0; i < 4; i++) {
        if (*evs[i])
            cudaEventDestroy(*evs[i]);
        *evs[i] = NULL;
    }
    if (st->copy)
        cudaStreamDestroy(st->copy);
    st->d_snap = NULL;
    st->copy = NULL;
    st->d_occ = NULL;
    st->ev_fork = st->ev_join = st->ev_stepped = st->ev_counted = NULL;
    st->side = st->stats = NULL;
}

int gpu_step_mark(gpu_state *st, sim_err *err)
{
    cudaStream_t s = st->stream;
    GPU_CHECK(err, cudaMemsetAsync(st->d_claim, 0, (size_t)st->cells * sizeof *st->d_claim, s));
    GPU_CHECK(err, cudaMemsetAsync(st->d_occ, 0, occ_words(st->cells) * sizeof(uint32_t), s));
    st->ab.cur = 0;
    st->dev_step_ok = 0;
    if (st->n <= 0)
        return SIM_OK;
    mark_kernel<<<ew_blocks(st->n), GPU_EW_THREADS, 0, s>>>(st->n, st->d_cells, st->d_occ);
    GPU_CHECK_LAUNCH(err, s);
    return gpu_bins_agents_init(&st->ab, &st->geom, st->d_cells, st->n, s, err);
}

int gpu_step_decide(gpu_state *st, const float *field, int queue_zeroed, sim_err *err)
{
    const gpu_bins_agents *b = &st->ab;
    gpu_hz_agents ag;
    ag.ids = b->ids[b->cur];
    ag.begin = b->begin[b->cur];
    ag.cells = b->cells[b->cur];
    ag.order = b->order;
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
    a.pdl = st->pdl;
    return gpu_hz_decide(&st->plan, &ag, field, &a, &st->d_ctl->queue, st->stream, err);
}

int gpu_step_move(gpu_state *st, float *field, int fold, sim_err *err)
{
    gpu_bins_agents *b = &st->ab;
    GPU_CHECK(err, gpu_launch(st->pdl, move_kernel, ew_blocks(st->n), GPU_EW_THREADS, 0,
                              st->stream, st->n, (const uint32_t *)b->ids[b->cur],
                              (const uint32_t *)b->cells[b->cur], st->d_target,
                              (const unsigned long long *)st->d_key, st->d_claim, st->d_occ,
                              st->d_cells, field, st->sc.deposit, fold,
                              gpu_bins_geom_of(&st->geom), b->count, b->rank,
                              &st->d_ctl->moved));
    GPU_CHECK_LAUNCH(err, st->stream);
    return SIM_OK;
}

/* The next bins from this step's final cells (gpu_bins_agents_rebin's work, on stream s); terms:
 * with the agents' checksum terms; snap: their (id, cell) into the deferred statistics' snapshot
 * slot instead. */
static int rebin_with(gpu_state *st, int terms, int snap, cudaStream_t s, sim_err *err)
{
    gpu_bins_agents *b = &st->ab;
    const int to = b->cur ^ 1;
    GPU_TRY(gpu_bins_agents_scan(b, &st->geom, to, &st->d_ctl->step, st->pdl, s, err));
    GPU_CHECK(err, gpu_launch(st->pdl, scatter_kernel, ew_blocks(st->n), GPU_EW_THREADS, 0, s,
                              st->n, (const uint32_t *)b->ids[b->cur],
                              (const uint32_t *)st->d_target, (const uint32_t *)b->rank,
                              (const uint32_t *)b->begin[to], gpu_bins_geom_of(&st->geom),
                              b->ids[to], b->cells[to], terms ? st->d_ctl : (gpu_ctl *)NULL,
                              snap ? st->defer.asnap : (uint2 *)NULL,
                              (const unsigned *)st->d_ring_pos,
                              st->defer.cap ? st->defer.cap : 1u));
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

int gpu_step_folds(const gpu_state *st)
{
    return st->n > 0 && gpu_jacobi_first_pass(st->sc.sweeps, st->tune.fuse_max) >= 2;
}

int gpu_step_pdl_choose(gpu_state *st, sim_err *err)
{
    st->pdl = st->cells <= GPU_PDL_CELLS_MAX;
    GPU_TRY(gpu_env_switch("HORIZON_PDL", &st->pdl, err));
    st->jac.pdl = st->pdl;
    return SIM_OK;
}

int gpu_step_stats_fused(const gpu_state *st)
{
    return gpu_step_folds(st) && gpu_jacobi_passes(st->sc.sweeps, st->tune.fuse_max) == 1;
}

int gpu_step_defer_choose(gpu_state *st, sim_err *err)
{
    int want = st->cells <= GPU_ST_DEFER_CELLS_MAX;
    GPU_TRY(gpu_env_switch("HORIZON_ST_DEFER", &want, err));
    st->defer_want = gpu_step_stats_fused(st) && want;
    if (!st->defer_want)
        gpu_step_defer_free(st);
    return SIM_OK;
}

size_t gpu_step_colsum_len(int w)
{
    return 2 * (size_t)w;
}

double *gpu_step_colpart(const gpu_state *st)
{
    return st->d_colsum + st->w;
}

int gpu_step_enqueue(gpu_state *st, float **cur, float **other, int want_stats, int batched,
                     sim_err *err)
{
    cudaStream_t s = st->stream;
    const int fold = gpu_step_folds(st);
    const int fused = want_stats && gpu_step_stats_fused(st);
    /* Deferred statistics (gpu_step_batch.cu): the pass and the scatter copy the field and the
     * agents into a snapshot slot; the step keeps only its residual. */
    const int defer = batched && fused && st->defer.cap > 0;
    const gpu_snap snap = {st->defer.snap, st->d_ring_pos, st->defer.cap};
    /* Also zeroes the tile queue. A batched step finds the control block zeroed by the one
     * before it (gpu_stats_ring_store) or by gpu_step_batch: one kernel less on its path. */
    if (!batched)
        GPU_TRY(gpu_ctl_reset(st->d_ctl, s, err));
    if (st->n > 0) {
        GPU_TRY(gpu_step_decide(st, *cur, 1, err));
        GPU_TRY(gpu_step_move(st, *cur, fold, err));
        GPU_CHECK(err, cudaEventRecord(st->ev_fork, s));
        GPU_CHECK(err, cudaStreamWaitEvent(st->side, st->ev_fork, 0));
        /* The next bins from this step's final cells, and the agents' statistics, beside the
         * diffusion. */
        GPU_TRY(rebin_with(st, fused && !defer, defer, st->side, err));
        GPU_CHECK(err, cudaEventRecord(st->ev_join, st->side));
    }
    GPU_TRY(gpu_jacobi_run_terms(&st->jac, cur, other, st->sc.sweeps, st->tune.fuse_max,
                                 st->sc.decay > 0.0f, fold ? st->d_occ : NULL, st->sc.deposit,
                                 want_stats ? &st->d_ctl->residual : NULL,
                                 fused && !defer ? st->d_ctl : NULL, defer ? &snap : NULL,
                                 fused && !defer ? gpu_step_colpart(st) : NULL, s, err));
    if (st->n > 0)
        GPU_CHECK(err, cudaStreamWaitEvent(s, st->ev_join, 0));
    if (want_stats && !fused) {
        GPU_TRY(gpu_stats_field(*cur, st->w, st->h, st->d_colsum, st->d_ctl, s, err));
        GPU_TRY(gpu_stats_agents(st->d_cells, st->n, st->d_ctl, s, err));
    } else if (want_stats && !defer) { /* the pass's sums, or the rows in order */
        GPU_TRY(gpu_stats_colsum(*cur, st->w, st->h, st->d_colsum, st->d_ctl,
                                 gpu_step_colpart(st), s, err));
    }
    if (batched)
        return gpu_stats_ring_store(st->d_ctl, st->d_colsum, st->w, st->d_ctl_ring,
                                    want_stats && !defer ? st->d_colsum_ring : NULL,
                                    defer, defer ? st->defer.ctl_of : NULL,
                                    st->defer.cap ? st->defer.cap : 1u, st->d_ring_pos, st->pdl,
                                    s, err);
    GPU_CHECK(err, cudaMemcpyAsync(&st->h_pin->ctl, st->d_ctl, sizeof(gpu_ctl),
                                   cudaMemcpyDeviceToHost, s));
    if (want_stats)
        GPU_CHECK(err, cudaMemcpyAsync(st->h_colsum, st->d_colsum, (size_t)st->w * sizeof(double),
                                       cudaMemcpyDeviceToHost, s));
    return SIM_OK;
}

void gpu_step_forget(gpu_state *st)
{
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++)
            {
                for (int b = 0; b < 2; b++) {
                    if (st->graph[i][j][k][b])
                        cudaGraphExecDestroy(st->graph[i][j][k][b]);
                    st->graph[i][j][k][b] = NULL;
                }
                if (st->graph_run[i][j][k])
                    cudaGraphExecDestroy(st->graph_run[i][j][k]);
                st->graph_run[i][j][k] = NULL;
            }
}

void gpu_step_forget_ring(gpu_state *st)
{
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            if (st->graph[i][j][1][1])
                cudaGraphExecDestroy(st->graph[i][j][1][1]);
            st->graph[i][j][1][1] = NULL;
            if (st->graph_run[i][j][1])
                cudaGraphExecDestroy(st->graph_run[i][j][1]);
            st->graph_run[i][j][1] = NULL;
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

/* Captures `steps` steps (1, or a run of batched ones) that start from the current buffer and
 * bins, with or without statistics, reading back to the host or into the rings. The host's view
 * of the bins is moved on between the steps while they are captured and put back after. The
 * stream may hold queued work (a batch captures between its launches): that work is not part of
 * the capture. */
static int capture(gpu_state *st, int want_stats, int batched, int steps, cudaGraphExec_t *out,
                   sim_err *err)
{
    float *cur = st->d_field, *other = st->d_spare;
    const int bins = st->ab.cur;
    cudaGraph_t g = NULL;
    GPU_CHECK(err, cudaStreamBeginCapture(st->stream, cudaStreamCaptureModeThreadLocal));
    int rc = SIM_OK;
    for (int i = 0; i < steps && rc == SIM_OK; i++) {
        rc = gpu_step_enqueue(st, &cur, &other, want_stats, batched, err);
        if (st->n > 0)
            st->ab.cur ^= 1; /* the step filled the other set */
    }
    st->ab.cur = bins;
    cudaError_t e = cudaStreamEndCapture(st->stream, &g);
    if (rc != SIM_OK) {
        if (g)
            cudaGraphDestroy(g);
        cudaGetLastError();
        return rc;
    }
    if (e != cudaSuccess)
        return gpu_fail(err, e, __FILE__, __LINE__, "cudaStreamEndCapture");
    if (!batched)
        count_nodes(st, g);
    e = cudaGraphInstantiate(out, g, 0);
    cudaGraphDestroy(g);
    if (e != cudaSuccess)
        return gpu_fail(err, e, __FILE__, __LINE__, "cudaGraphInstantiate");
    return SIM_OK;
}

/* The host's view after one step: the graph ran gpu_jacobi_passes() passes, each swapping the
 * buffers, and filled the other set of bins. */
static void advance(gpu_state *st)
{
    if (st->sc.sweeps > 0 && gpu_jacobi_passes(st->sc.sweeps, st->tune.fuse_max) % 2) {
        float *t = st->d_field;
        st->d_field = st->d_spare;
        st->d_spare = t;
    }
    if (st->n > 0)
        st->ab.cur ^= 1;
}

int gpu_step_launch(gpu_state *st, int want_stats, int batched, sim_err *err)
{
    want_stats = want_stats != 0;
    batched = batched != 0;
    const int parity = st->d_field == st->d_buf[1];
    cudaGraphExec_t *ge = &st->graph[parity][st->ab.cur][want_stats][batched];
    if (!*ge)
        GPU_TRY(capture(st, want_stats, batched, 1, ge, err));
    GPU_CHECK(err, cudaGraphLaunch(*ge, st->stream));
    advance(st); /* the next launch picks its graph by the state after this step */
    return SIM_OK;
}

int gpu_step_graph_steps(const gpu_state *st)
{
    if (st->tune.steps_per_graph > 0)
        return st->tune.steps_per_graph;
    return st->batched >= GPU_BATCH_RUN_AFTER ? GPU_BATCH_RUN_STEPS : GPU_BATCH_GRAPH_STEPS;
}

int gpu_step_launch_run(gpu_state *st, int want_stats, sim_err *err)
{
    want_stats = want_stats != 0;
    const int steps = gpu_step_graph_steps(st);
    const int parity = st->d_field == st->d_buf[1];
    cudaGraphExec_t *ge = &st->graph_run[parity][st->ab.cur][want_stats];
    if (!*ge)
        GPU_TRY(capture(st, want_stats, 1, steps, ge, err));
    GPU_CHECK(err, cudaGraphLaunch(*ge, st->stream));
    for (int i = 0; i < steps; i++)
        advance(st);
    return SIM_OK;
}

int gpu_step_upload(gpu_state *st, int64_t step, sim_err *err)
{
    if (!st->dev_step_ok || st->dev_step != (unsigned long long)step) {
        st->h_pin->step = (unsigned long long)step;
        GPU_CHECK(err, cudaMemcpyAsync(&st->d_ctl->step, &st->h_pin->step,
                                       sizeof st->h_pin->step, cudaMemcpyHostToDevice,
                                       st->stream));
    }
    st->dev_step_ok = 0; /* until the steps are known to have run */
    return SIM_OK;
}

void gpu_step_ran(gpu_state *st, int64_t step, int n)
{
    /* The graph advances d_ctl->step when it bins agents (n > 0); without agents nothing reads
     * it, and the next step uploads it again. */
    st->dev_step = (unsigned long long)(step + n);
    st->dev_step_ok = st->n > 0;
}

double gpu_step_colsum_total(const double *colsum, int w)
{
    /* Columns in order, as sim_cpu.c adds them. */
    double total = 0.0;
    for (int x = 0; x < w; x++)
        total += colsum[x];
    return total;
}

void gpu_step_stats(const gpu_state *st, const gpu_ctl *c, double total, int want_stats,
                    sim_stats *out)
{
    out->moved = (int64_t)c->moved;
    if (!want_stats)
        return;
    float res;
    memcpy(&res, &c->residual, sizeof res);
    out->field_total = total;
    out->field_mean = total / (double)st->cells;
    out->field_max = gpu_float_from_key(c->max_key);
    out->residual = res;
    out->checksum = c->checksum;
}

int gpu_step_run(gpu_state *st, int64_t step, int want_stats, sim_stats *out, sim_err *err)
{
    GPU_TRY(gpu_step_upload(st, step, err));
    GPU_TRY(gpu_step_launch(st, want_stats, 0, err));
    GPU_CHECK(err, cudaStreamSynchronize(st->stream));
    gpu_step_ran(st, step, 1);
    gpu_step_stats(st, &st->h_pin->ctl,
                   want_stats ? gpu_step_colsum_total(st->h_colsum, st->w) : 0.0, want_stats,
                   out);
    return SIM_OK;
}
