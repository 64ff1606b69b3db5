/* gpu_step.cu - one step of DESIGN.md on the device, and its capture in a CUDA graph.
 *
 * Order (same as sim_cpu.c): bin agents by tile -> tile-sum kernel (sense, decide, claim with a
 * 64-bit atomicMax on the target's claim word) -> move + deposit -> Jacobi passes with decay in
 * the last -> statistics when asked. The claim word doubles as occupancy: UINT64_MAX for an
 * occupied cell (never a key: keys hold an agent id < 2^30 in the low half), so "empty at the
 * start of the step" is "claim word != UINT64_MAX" while claims land, and the move kernel leaves
 * every word at 0 or UINT64_MAX again, so no reset pass is needed.
 *
 * The step's launches are captured once per (field buffer, statistics) pair and replayed; the
 * step index travels through d_ctl->step, so the graph itself never changes. */
#include <string.h>

#include "gpu_check.h"
#include "gpu_policy.h"
#include "gpu_state.h"

extern "C" {
#include "sim_rules.h"
}

#define FULL_MASK 0xffffffffu
#define OCCUPIED (~0ull)

/* Thread per agent in tile order q (the order of the tile-sum kernel, so the claim words and
 * field cells a warp touches are close together): a claimer whose key is still the target's
 * claim word wins, moves and turns the claim words into occupancy (target occupied, old cell
 * empty). No other thread writes those two words in this kernel: the target was empty at the
 * start (no one leaves it) and the old cell was occupied (no one claimed it). Losers read the
 * winner's key or UINT64_MAX, never their own. Then every agent deposits on its (new) cell: one
 * agent per cell, no conflicts. */
__global__ void move_kernel(int64_t n, const uint32_t *__restrict__ ids, uint32_t *cells,
                            const uint32_t *__restrict__ target,
                            const unsigned long long *__restrict__ key, unsigned long long *claim,
                            float *field, float deposit, unsigned long long *moved)
{
    int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int mv = 0;
    if (q < n) {
        uint32_t id = ids[q], c = cells[id], t = target[q];
        if (t != c && claim[t] == key[q]) {
            claim[t] = OCCUPIED;
            claim[c] = 0;
            cells[id] = t;
            c = t;
            mv = 1;
        }
        field[c] = SIM_FADD(field[c], deposit);
    }
    unsigned votes = __ballot_sync(FULL_MASK, mv);
    if ((threadIdx.x & 31) == 0 && votes)
        atomicAdd(moved, (unsigned long long)__popc(votes));
}

__global__ void mark_kernel(int64_t n, const uint32_t *__restrict__ cells,
                            unsigned long long *claim)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        claim[cells[i]] = OCCUPIED;
}

int gpu_step_mark(gpu_state *st, sim_err *err)
{
    GPU_CHECK(err, cudaMemsetAsync(st->d_claim, 0, (size_t)st->cells * sizeof *st->d_claim,
                                   st->stream));
    if (st->n > 0) {
        mark_kernel<<<(unsigned)((st->n + GPU_EW_THREADS - 1) / GPU_EW_THREADS), GPU_EW_THREADS,
                      0, st->stream>>>(st->n, st->d_cells, st->d_claim);
        GPU_CHECK_LAUNCH(err, st->stream);
    }
    return SIM_OK;
}

int gpu_step_enqueue(gpu_state *st, float **cur, float **other, int want_stats, sim_err *err)
{
    cudaStream_t s = st->stream;
    GPU_TRY(gpu_ctl_reset(st->d_ctl, s, err));
    if (st->n > 0) {
        GPU_TRY(gpu_bins_build(&st->bins, &st->geom, st->d_cells, st->n, s, err));
        gpu_decide_args a;
        a.seed = st->sc.seed;
        a.threshold = st->threshold;
        a.d_step = &st->d_ctl->step;
        a.d_claim = st->d_claim;
        a.d_target = st->d_target;
        a.d_key = st->d_key;
        GPU_TRY(gpu_hz_decide(&st->plan, &st->bins, *cur, st->d_cells, &a, &st->d_ctl->queue, s,
                              err));
        move_kernel<<<(unsigned)((st->n + GPU_EW_THREADS - 1) / GPU_EW_THREADS), GPU_EW_THREADS,
                      0, s>>>(st->n, st->bins.d_id_out, st->d_cells, st->d_target, st->d_key,
                              st->d_claim, *cur, st->sc.deposit, &st->d_ctl->moved);
        GPU_CHECK_LAUNCH(err, s);
    }
    GPU_TRY(gpu_jacobi_run(&st->jac, cur, other, st->sc.sweeps, st->tune.fuse_max,
                           st->sc.decay > 0.0f, want_stats ? &st->d_ctl->residual : NULL, s,
                           err));
    if (want_stats) {
        GPU_TRY(gpu_stats_field(*cur, st->w, st->h, st->d_colsum, st->d_ctl, s, err));
        GPU_TRY(gpu_stats_agents(st->d_cells, st->n, st->d_ctl, s, err));
    }
    return SIM_OK;
}

int gpu_step_part(gpu_state *st, int part, sim_err *err)
{
    cudaStream_t s = st->stream;
    float *cur = st->d_field, *other = st->d_spare;
    gpu_decide_args a;
    switch (part) {
    case GPU_PART_BIN:
        return st->n > 0 ? gpu_bins_build(&st->bins, &st->geom, st->d_cells, st->n, s, err)
                         : SIM_OK;
    case GPU_PART_DECIDE:
        if (st->n == 0)
            return SIM_OK;
        a.seed = st->sc.seed;
        a.threshold = st->threshold;
        a.d_step = &st->d_ctl->step;
        a.d_claim = st->d_claim;
        a.d_target = st->d_target;
        a.d_key = st->d_key;
        return gpu_hz_decide(&st->plan, &st->bins, cur, st->d_cells, &a, &st->d_ctl->queue, s,
                             err);
    case GPU_PART_MOVE:
        if (st->n == 0)
            return SIM_OK;
        move_kernel<<<(unsigned)((st->n + GPU_EW_THREADS - 1) / GPU_EW_THREADS), GPU_EW_THREADS,
                      0, s>>>(st->n, st->bins.d_id_out, st->d_cells, st->d_target, st->d_key,
                              st->d_claim, cur, st->sc.deposit, &st->d_ctl->moved);
        GPU_CHECK_LAUNCH(err, s);
        return SIM_OK;
    case GPU_PART_DIFFUSE:
        return gpu_jacobi_run(&st->jac, &cur, &other, st->sc.sweeps, st->tune.fuse_max,
                              st->sc.decay > 0.0f, NULL, s, err);
    default:
        GPU_TRY(gpu_stats_field(cur, st->w, st->h, st->d_colsum, st->d_ctl, s, err));
        return gpu_stats_agents(st->d_cells, st->n, st->d_ctl, s, err);
    }
}

void gpu_step_forget(gpu_state *st)
{
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            if (st->graph[i][j])
                cudaGraphExecDestroy(st->graph[i][j]);
            st->graph[i][j] = NULL;
        }
}

/* Captures the step that starts from the current buffer, with or without statistics. */
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
        return rc;
    }
    if (e != cudaSuccess)
        return gpu_fail(err, e, __FILE__, __LINE__, "cudaStreamEndCapture");
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
    cudaGraphExec_t *ge = &st->graph[parity][want_stats];
    if (!*ge)
        GPU_TRY(capture(st, want_stats, ge, err));

    st->h_pin->step = (unsigned long long)step;
    GPU_CHECK(err, cudaMemcpyAsync(&st->d_ctl->step, &st->h_pin->step, sizeof st->h_pin->step,
                                   cudaMemcpyHostToDevice, st->stream));
    GPU_CHECK(err, cudaGraphLaunch(*ge, st->stream));
    GPU_CHECK(err, cudaMemcpyAsync(&st->h_pin->ctl, st->d_ctl, sizeof(gpu_ctl),
                                   cudaMemcpyDeviceToHost, st->stream));
    if (want_stats)
        GPU_CHECK(err, cudaMemcpyAsync(st->h_colsum, st->d_colsum, (size_t)st->w * sizeof(double),
                                       cudaMemcpyDeviceToHost, st->stream));
    GPU_CHECK(err, cudaStreamSynchronize(st->stream));

    /* The graph ran gpu_jacobi_passes() passes, each swapping the buffers. */
    if (st->sc.sweeps > 0 && gpu_jacobi_passes(st->sc.sweeps, st->tune.fuse_max) % 2) {
        float *t = st->d_field;
        st->d_field = st->d_spare;
        st->d_spare = t;
    }
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
