/* gpu_step_batch.cu - many steps per host synchronisation: the backend's step_batch.
 *
 * A small world's step is a few microseconds of kernels, but gpu_step_run waits for each one to
 * finish so that it can hand `moved` back: launch latency and the round trip to the host then
 * dominate. Here the n graphs of a batch are launched back to back on the instance's stream;
 * each ends by storing its control block (and, with statistics, its column sums) into the next
 * slot of a device ring (gpu_stats_ring_store); after the last one, a kernel adds each step's
 * column sums into its field total (gpu_stats_totals, the host's additions in the host's order),
 * one copy of the control ring and one of the totals to pinned memory, one synchronisation, and
 * the host turns slot k into step k's sim_stats with the same code as gpu_step_run
 * (gpu_step_stats). The column sums themselves stay on the device: copying them back and adding
 * them on the host (4 KB and 512 additions a step of the default scenario, 32 KB and 4,096 of
 * the large one) kept the device idle ~0.2 ms a chunk (gpu/BENCH.md, round 13). Nothing else
 * differs: the same kernels in the same order, so the same bits. Two more savings on the GPU's
 * side of a step: a batched step does not reset the control block (the ring store of the step
 * before it does), and a run of
 * gpu_step_graph_steps() steps that all want statistics, or all not, is captured as one graph,
 * so that the gap between graph launches comes once a run instead of once a step (one step a
 * graph until the instance has run GPU_BATCH_RUN_AFTER batched steps, then runs of
 * GPU_BATCH_RUN_STEPS).
 *
 * The control-block and total rings (SIM_STEP_BATCH_MAX x 40 B and 8 B) are allocated in
 * create. The column-sum ring needs 8 B per column per step with statistics (8 MiB for 256
 * steps of a 4096-wide world, 128 MiB at 65536): it is taken on the first batch that wants
 * statistics, for as many of its steps as want them (rounded up to a power of two), and grown
 * later if a batch wants more. A ring that cannot be had in full is taken at half the size, a
 * quarter, ..., and the batch runs in chunks that fit it; with no slot at all, its steps with
 * statistics go through gpu_step_run.
 *
 * Deferred statistics (worlds of at most GPU_ST_DEFER_CELLS_MAX cells, gpu_step_defer_choose):
 * a small world's step is ~17 us of dependent kernels, and its statistics' work lengthened the
 * chain wherever it went: hashing in the pass and the move (+2.2 us under ncu), the column sums
 * (a chain of 512 dependent double additions, ~10 us) beside the next step, which the step after
 * must wait for. So a batched step with statistics keeps only its residual; its pass also writes
 * the field into a snapshot slot and its scatter the agents' (id, cell), and gpu_stats_defer sums
 * and hashes many steps at once (their column chains side by side): each time half the
 * defer.cap slots are filled, and at the chunk's end, on the stats stream beside the steps that
 * follow (defer_aside); a step that would write a slot still being read waits for that pass.
 * On the same stream as the steps, the passes cost the default scenario 2% more (gpu/BENCH.md,
 * round 13). The snapshots (GPU_ST_DEFER_BYTES at most) are taken on the first batch with
 * statistics; without them the batch runs the other way.
 *
 * Small worlds (gpu_step_resident_use) run the batch's runs of steps without statistics in the
 * resident kernel instead (gpu_step_resident.cu): one launch for the whole run; tiny worlds run
 * every step of a batch, with statistics or not, in its one-block kernel, in chunks that fit the
 * column-sum ring. */
#include <string.h>

#include "gpu_alloc.h"
#include "gpu_check.h"
#include "gpu_policy.h"
#include "gpu_state.h"

int gpu_step_rings_alloc(gpu_state *st, sim_err *err)
{
    const size_t ctl = SIM_STEP_BATCH_MAX * sizeof(gpu_ctl);
    GPU_TRY(gpu_alloc(st, (void **)&st->d_ctl_ring, ctl, "batch control ring", err));
    GPU_TRY(gpu_alloc(st, (void **)&st->d_ring_pos, 2 * sizeof(unsigned), "batch ring positions",
                      err));
    GPU_TRY(gpu_alloc_pinned((void **)&st->h_ctl_ring, ctl, "batch control readback", err));
    const size_t totals = SIM_STEP_BATCH_MAX * sizeof(double);
    GPU_TRY(gpu_alloc(st, (void **)&st->d_total_ring, totals, "batch field totals", err));
    GPU_TRY(gpu_alloc_pinned((void **)&st->h_total_ring, totals, "batch field totals readback",
                             err));
    return SIM_OK;
}

static void free_colsum_ring(gpu_state *st)
{
    if (st->d_colsum_ring)
        st->bytes -= (size_t)st->ring_cap * (size_t)st->w * sizeof(double);
    gpu_alloc_free(st->d_colsum_ring);
    st->d_colsum_ring = NULL;
    st->ring_cap = 0;
}

/* The bytes a deferred-statistics slot takes in each of gpu_defer's arrays: the field's
 * snapshot, the agents' (id, cell) pairs, the control slot. */
static void defer_slot_sizes(const gpu_state *st, size_t size[3])
{
    size[0] = gpu_defer_slot_floats(st->cells) * sizeof(float);
    size[1] = (size_t)(st->n > 0 ? st->n : 1) * sizeof(uint2);
    size[2] = sizeof(unsigned);
}

void gpu_step_defer_free(gpu_state *st)
{
    size_t size[3];
    defer_slot_sizes(st, size);
    st->bytes -= (size_t)st->defer.cap * (size[0] + size[1] + size[2]);
    gpu_alloc_free(st->defer.snap);
    gpu_alloc_free(st->defer.asnap);
    gpu_alloc_free(st->defer.ctl_of);
    memset(&st->defer, 0, sizeof st->defer);
}

/* The deferred statistics' snapshots, on the first batch with statistics that wants them:
 * GPU_ST_DEFER_SLOTS slots, or as many as GPU_ST_DEFER_BYTES hold, but at least a captured
 * run's steps (GPU_BATCH_GRAPH_MAX); without them (too large a world, or no memory) the batch
 * runs without deferral, and later ones do not ask again. */
static void defer_reserve(gpu_state *st)
{
    if (!st->defer_want || st->defer.cap)
        return;
    st->defer_want = 0; /* one try */
    size_t size[3];
    defer_slot_sizes(st, size);
    size_t slots = GPU_ST_DEFER_BYTES / (size[0] + size[1] + size[2]);
    if (slots > GPU_ST_DEFER_SLOTS)
        slots = GPU_ST_DEFER_SLOTS;
    if (slots < GPU_BATCH_GRAPH_MAX)
        return;
    gpu_defer d;
    memset(&d, 0, sizeof d);
    void **arrays[3] = {(void **)&d.snap, (void **)&d.asnap, (void **)&d.ctl_of};
    sim_err quiet; /* without them the batch only takes the other path: nothing to report */
    for (int i = 0; i < 3; i++) {
        if (gpu_alloc(st, arrays[i], slots * size[i], "deferred statistics", &quiet) != SIM_OK) {
            for (int k = 0; k < i; k++) { /* gpu_alloc counted what it gave */
                st->bytes -= slots * size[k];
                gpu_alloc_free(*arrays[k]);
            }
            return;
        }
    }
    d.cap = (unsigned)slots;
    d.cells = st->cells;
    d.n = st->n;
    st->defer = d;
    gpu_step_forget_ring(st); /* the batched graphs with statistics change */
}

void gpu_step_rings_free(gpu_state *st)
{
    gpu_step_defer_free(st);
    free_colsum_ring(st);
    gpu_alloc_free(st->d_ctl_ring);
    gpu_alloc_free(st->d_ring_pos);
    gpu_alloc_free_pinned(st->h_ctl_ring);
    gpu_alloc_free(st->d_total_ring);
    gpu_alloc_free_pinned(st->h_total_ring);
    st->d_ctl_ring = st->h_ctl_ring = NULL;
    st->d_total_ring = st->h_total_ring = NULL;
    st->d_ring_pos = NULL;
}

/* Tries a column-sum ring of `slots` slots in place of the current one. */
static int try_colsum_ring(gpu_state *st, int slots)
{
    const size_t bytes = (size_t)slots * (size_t)st->w * sizeof(double);
    double *d = NULL;
    sim_err quiet; /* a failure here only makes the batch smaller: nothing to report */
    if (gpu_alloc(st, (void **)&d, bytes, "batch column-sum ring", &quiet) != SIM_OK)
        return 0;
    free_colsum_ring(st);
    gpu_step_forget_ring(st); /* their graphs hold the old ring's address */
    st->d_colsum_ring = d;
    st->ring_cap = slots;
    return 1;
}

/* Column-sum slots for `need` steps with statistics: the ring's size after trying to grow it to
 * need rounded up to a power of two, then to halves of that down to the current size. May be
 * less than need (even 0). */
static int reserve_colsum_ring(gpu_state *st, int need)
{
    if (need <= st->ring_cap)
        return st->ring_cap;
    int want = 1;
    while (want < need)
        want *= 2;
    if (want > SIM_STEP_BATCH_MAX)
        want = SIM_STEP_BATCH_MAX;
    for (int slots = want; slots > st->ring_cap; slots /= 2)
        if (try_colsum_ring(st, slots))
            break;
    return st->ring_cap;
}

/* Deferred steps j0 .. j0 + m - 1 (gpu_stats_defer) on the stats stream, beside the steps that
 * follow; ev_counted marks their end (and that of every such pass before them). */
static int defer_aside(gpu_state *st, int j0, int m, sim_err *err)
{
    GPU_CHECK(err, cudaEventRecord(st->ev_stepped, st->stream));
    GPU_CHECK(err, cudaStreamWaitEvent(st->stats, st->ev_stepped, 0));
    GPU_TRY(gpu_stats_defer(&st->defer, st->w, st->h, j0, m, st->d_ctl_ring, st->d_colsum_ring,
                            st->stats, err));
    GPU_CHECK(err, cudaEventRecord(st->ev_counted, st->stats));
    return SIM_OK;
}

/* n steps (1 <= n <= SIM_STEP_BATCH_MAX) of which at most ring_cap want statistics: launched
 * back to back, read back once. */
static int run_chunk(gpu_state *st, int64_t step, int n, const uint8_t *want, sim_stats *out,
                     sim_err *err)
{
    cudaStream_t s = st->stream;
    const int defer = gpu_step_stats_fused(st) && st->defer.cap > 0; /* gpu_stats_defer */
    int pending = 0; /* deferred steps not yet computed: the last of the nstats so far */
    /* The first deferred step handed to the stats stream whose end the steps have not waited
     * for (-1: none): its slot is written again by statistics step busy + cap. */
    int busy = -1;
    const int halfway = (int)st->defer.cap / 2;
    GPU_TRY(gpu_step_upload(st, step, err));
    GPU_CHECK(err, cudaMemsetAsync(st->d_ring_pos, 0, 2 * sizeof(unsigned), s));
    GPU_TRY(gpu_ctl_reset(st->d_ctl, s, err)); /* the batched graphs do not reset it */
    /* A run of `g` steps with the same statistics choice is one graph; the others one each.
     * Deferred statistics are computed beside the steps each time half the slots are filled
     * (or a run needs more than are left), and at the end. */
    const int g = gpu_step_graph_steps(st);
    int nstats = 0;
    for (int k = 0; k < n;) {
        const int w = want && want[k];
        int same = 1;
        while (g > 1 && same < g && k + same < n && (want && want[k + same]) == w)
            same++;
        if (!(g > 1 && same == g))
            same = 1;
        /* Half the slots filled (or too few left for this run): their statistics beside the
         * next steps; a run that would write a slot still being read waits for them. */
        if (defer && w && (pending >= halfway || pending + same > (int)st->defer.cap)) {
            GPU_TRY(defer_aside(st, nstats - pending, pending, err));
            if (busy < 0)
                busy = nstats - pending;
            pending = 0;
        }
        if (defer && w && busy >= 0 && nstats + same > busy + (int)st->defer.cap) {
            GPU_CHECK(err, cudaStreamWaitEvent(s, st->ev_counted, 0));
            busy = -1;
        }
        if (same > 1)
            GPU_TRY(gpu_step_launch_run(st, w, err));
        else
            GPU_TRY(gpu_step_launch(st, w, 1, err));
        nstats += w * same;
        pending += defer ? w * same : 0;
        k += same;
    }
    if (pending > 0)
        GPU_TRY(defer_aside(st, nstats - pending, pending, err));
    if (defer && nstats > 0) { /* the read-back waits for the last passes */
        GPU_CHECK(err, cudaEventRecord(st->ev_counted, st->stats));
        GPU_CHECK(err, cudaStreamWaitEvent(s, st->ev_counted, 0));
    }
    return gpu_step_batch_results(st, step, n, want, nstats, out, err);
}

int gpu_step_batch_results(gpu_state *st, int64_t step, int n, const uint8_t *want, int nstats,
                           sim_stats *out, sim_err *err)
{
    cudaStream_t s = st->stream;
    GPU_CHECK(err, cudaMemcpyAsync(st->h_ctl_ring, st->d_ctl_ring, (size_t)n * sizeof(gpu_ctl),
                                   cudaMemcpyDeviceToHost, s));
    if (nstats > 0) { /* the totals, not the column sums, come back */
        GPU_TRY(gpu_stats_totals(st->d_colsum_ring, st->w, nstats, st->d_total_ring, s, err));
        GPU_CHECK(err, cudaMemcpyAsync(st->h_total_ring, st->d_total_ring,
                                       (size_t)nstats * sizeof(double), cudaMemcpyDeviceToHost,
                                       s));
    }
    GPU_CHECK(err, cudaStreamSynchronize(s));
    gpu_step_ran(st, step, n);
    for (int k = 0, j = 0; k < n; k++) {
        const int w = want && want[k];
        gpu_step_stats(st, &st->h_ctl_ring[k], w ? st->h_total_ring[j] : 0.0, w, &out[k]);
        j += w;
    }
    return SIM_OK;
}

/* Runs a chunk of a batch: n steps from `step`, want[k] (NULL: none) for statistics, at most
 * st->ring_cap of them. */
typedef int (*chunk_fn)(gpu_state *st, int64_t step, int n, const uint8_t *want, sim_stats *out,
                        sim_err *err);

/* A batch in chunks whose steps with statistics fit the column-sum ring, each run by `run` (the
 * graphs, or the one-block kernel); with no slot at all, a step with statistics alone. */
static int batch_chunks(gpu_state *st, int64_t step, int n, const uint8_t *want, sim_stats *out,
                        chunk_fn run, sim_err *err)
{
    int need = 0;
    for (int k = 0; want && k < n; k++)
        need += want[k] != 0;
    const int cap = need > 0 ? reserve_colsum_ring(st, need) : 0;
    int done = 0;
    while (done < n) {
        if (want && want[done] && cap == 0) { /* no ring at all: this step alone */
            GPU_TRY(gpu_step_run(st, step + done, 1, &out[done], err));
            done++;
            continue;
        }
        /* The longest run from `done` whose steps with statistics fit the ring. */
        int len = 0, ns = 0;
        while (done + len < n && len < SIM_STEP_BATCH_MAX) {
            const int w = want && want[done + len];
            if (w && ns == cap)
                break;
            ns += w;
            len++;
        }
        GPU_TRY(run(st, step + done, len, want ? want + done : NULL, out + done, err));
        done += len;
    }
    return SIM_OK;
}

/* The graph path of a batch. */
static int batch_graphs(gpu_state *st, int64_t step, int n, const uint8_t *want, sim_stats *out,
                        sim_err *err)
{
    for (int k = 0; want && k < n; k++)
        if (want[k]) {
            defer_reserve(st);
            break;
        }
    return batch_chunks(st, step, n, want, out, run_chunk, err);
}

int gpu_step_batch(gpu_state *st, int64_t step, int n, const uint8_t *want, sim_stats *out,
                   sim_err *err)
{
    st->batched += n;
    if (st->tiny_smem > 0) /* every step in the one-block kernel, statistics too */
        return batch_chunks(st, step, n, want, out, gpu_step_resident_run, err);
    if (!gpu_step_resident_use(st))
        return batch_graphs(st, step, n, want, out, err);
    /* Runs of steps without statistics in the resident kernel, the others by graphs. */
    for (int done = 0; done < n;) {
        const int w = want && want[done];
        int len = 1;
        while (done + len < n && (want && want[done + len]) == w)
            len++;
        if (w)
            GPU_TRY(batch_graphs(st, step + done, len, want + done, out + done, err));
        else
            GPU_TRY(gpu_step_resident_run(st, step + done, len, NULL, out + done, err));
        done += len;
    }
    return SIM_OK;
}
