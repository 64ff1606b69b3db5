/* gpu_state.h - the state of one CUDA backend instance (the opaque `void *` of the backend
 * table) and the internal entry points the backend's .cu files share. Internal to gpu/ (C++).
 *
 * Device memory, all allocated once in create: two field buffers (4 + 4 B/cell), the claim word
 * (8 B/cell: 0, or the best claim of this step), the occupancy bitmap (1 bit/cell), column sums
 * (8 B/column); per agent its cell, target and key (16 B) plus the two sets of bins (ids and
 * cells in tile order, 16 B) and the rank in the next bins (4 B); per tile two run starts, a
 * count and the SELL mapping's slice order (16 B). About 16.1 B/cell + 36 B/agent. The read-back
 * rings of batched steps (gpu_step_batch): SIM_STEP_BATCH_MAX control blocks on the device and
 * pinned (10 KB each, in create) and, taken on first use, column sums for the steps of a batch
 * that want statistics (8 B/column per slot, device and pinned, up to SIM_STEP_BATCH_MAX
 * slots). */
#ifndef GPU_STATE_H
#define GPU_STATE_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "gpu_backend.h"
#include "gpu_horizon.h"
#include "gpu_jacobi.h"
#include "gpu_stats.h"

/* Host memory the device copies to and from (pinned, so copies are asynchronous). */
typedef struct gpu_pinned {
    unsigned long long step; /* the step index uploaded before each step */
    gpu_ctl ctl;             /* the control block read back after a step */
} gpu_pinned;

typedef struct gpu_state {
    sim_scenario sc;
    int w, h, periodic;
    int64_t cells, n;
    int device;
    cudaStream_t stream;

    float *d_buf[2];           /* the two field buffers */
    float *d_field, *d_spare;  /* which of them is current */
    unsigned long long *d_claim;
    uint32_t *d_occ;           /* occupancy bitmap, (cells + 31) / 32 words */
    uint32_t *d_cells, *d_target;
    unsigned long long *d_key;
    double *d_colsum;          /* w column sums, then gpu_step_colpart's */
    gpu_ctl *d_ctl;
    uint8_t *d_rgba;           /* compose output, grown on demand (not part of the step) */
    size_t rgba_bytes;
    void *d_probe;             /* the viewer reads' queries and answers (gpu_probe.h), grown on
                                * demand (not part of the step) */
    size_t probe_bytes;

    gpu_pinned *h_pin;
    double *h_colsum;          /* pinned, width entries */

    gpu_bins_agents ab;        /* the step's bins (gpu_bins.h) */
    gpu_hz_geom geom;
    gpu_hz_plan plan;
    gpu_jac jac;
    gpu_tuning tune;
    uint64_t threshold;

    /* The second stream of a step (the next bins are built while the field diffuses) and the
     * events that fork it from and join it to `stream`. */
    cudaStream_t side;
    cudaEvent_t ev_fork, ev_join;

    /* d_ctl->step as the device has it (the step graph advances it), valid when dev_step_ok. */
    unsigned long long dev_step;
    int64_t batched; /* steps run by gpu_step_batch (gpu_step_graph_steps) */
    int dev_step_ok;

    /* Read-back rings of a batch (gpu_step_batch): step k of a chunk leaves its control block
     * in slot k, and the j-th step that wants statistics its column sums in slot j; the graph
     * stores them there (gpu_stats_ring_store) at positions it reads from d_ring_pos, which the
     * host zeroes before each chunk. The column-sum ring has ring_cap slots (0 until a batch
     * with statistics asks; grown, never shrunk). */
    gpu_ctl *d_ctl_ring, *h_ctl_ring;          /* SIM_STEP_BATCH_MAX each, h_ pinned */
    /* Deferred statistics' passes beside the steps (gpu_step_batch.cu's defer_aside): on
     * `stats` once ev_stepped has marked the steps' progress on `stream`; ev_counted marks the
     * end of the last such pass. */
    cudaStream_t stats;
    cudaEvent_t ev_stepped, ev_counted;
    /* Field reads beside the steps (the table's read_field_begin, gpu_backend.cu): the field is
     * copied into d_snap on `copy` (the steps wait for that device copy only), then from there
     * to the host on the same stream; ev_read[t] marks the end of ticket t's copy. Made at the
     * first begin (a run without field dumps never pays for the snapshot). */
    float *d_snap;
    cudaStream_t copy;
    cudaEvent_t ev_at, ev_snap, ev_read[2];
    unsigned reads; /* begins so far: the next ticket is reads % 2 */
    unsigned *d_ring_pos;                      /* [0] control slot, [1] column-sum slot */
    /* Deferred statistics (gpu_stats.h's gpu_defer; gpu_step_batch.cu): wanted on small worlds
     * (gpu_step_defer_choose), taken with the first batch with statistics; defer.cap 0: not
     * in use (not wanted, or not had). */
    int defer_want;
    gpu_defer defer;
    double *d_colsum_ring;                     /* ring_cap * w */
    /* The field totals of a chunk's steps with statistics, from the column-sum ring
     * (gpu_stats_totals): only these come back, not the column sums. */
    double *d_total_ring, *h_total_ring;       /* SIM_STEP_BATCH_MAX each, h_ pinned */
    int ring_cap;

    /* Captured steps: [current field is d_buf[1]][current bins are set 1][with statistics]
     * [batched: results into the rings instead of to the host]; and runs of batched steps,
     * gpu_step_graph_steps() of them in one graph, all with or all without statistics. */
    cudaGraphExec_t graph[2][2][2][2];
    cudaGraphExec_t graph_run[2][2][2];
    int graph_nodes, graph_kernels; /* of the last capture */
    int res_blocks; /* grid of the resident kernel (gpu_step_resident.cu); 0: not usable */
    gpu_hz_geom tiny_geom; /* the one-block kernel's region: one tile of the whole world */
    size_t tiny_smem;      /* its shared memory in bytes; 0: not used */
    int pdl;        /* the step's kernels overlap their predecessors' ends (gpu_step_pdl_choose) */
    size_t bytes; /* device bytes allocated */
} gpu_state;

/* Enqueues one whole step on st->stream (the step index is read from d_ctl->step), starting from
 * the field in *cur and leaving the result in *cur (the buffers may swap). Its results (the
 * control block, the column sums when want_stats) end in st->h_pin and st->h_colsum, or with
 * `batched` in the next slots of the read-back rings; a batched step expects the control block's
 * outputs zeroed and leaves them so (gpu_stats_ring_store). Used eagerly and under graph capture
 * alike; allocates nothing. */
int gpu_step_enqueue(gpu_state *st, float **cur, float **other, int want_stats, int batched,
                     sim_err *err);

/* The column sums that a step's fused pass with the statistics' terms adds in some order
 * (gpu_jacobi_run_terms' d_colpart, w doubles after d_colsum's column sums), for that step's
 * gpu_stats_colsum, which leaves them zero again. */
double *gpu_step_colpart(const gpu_state *st);

/* The doubles of d_colsum for a world w wide: the w column sums, then gpu_step_colpart's. */
size_t gpu_step_colsum_len(int w);

/* The backend's step: uploads the step index, launches the captured graph (captured on first
 * use), reads back moved and, when asked, the statistics. */
int gpu_step_run(gpu_state *st, int64_t step, int want_stats, sim_stats *out, sim_err *err);

/* The backend's step_batch (sim_backend.h): n steps' graphs queued back to back on st->stream,
 * each storing its results into the rings, then one copy of the rings to pinned memory and one
 * synchronisation; out[k] as gpu_step_run would give it, bit for bit. The column-sum ring is
 * taken or grown here, for the steps of the batch that want statistics; when that memory is
 * not there, the batch runs in smaller chunks, and a step with statistics through gpu_step_run
 * when not even one slot can be had: slower, never an error. out[k].step and .agents are the
 * caller's. */
int gpu_step_batch(gpu_state *st, int64_t step, int n, const uint8_t *want_stats, sim_stats *out,
                   sim_err *err);

/* The pieces of a step both paths share (gpu_step.cu):
 *   gpu_step_upload: queues the upload of the step index when the device does not hold it
 *                    (first step, resume, no agents) and marks it unknown until gpu_step_ran;
 *   gpu_step_launch: launches the captured graph of the current (field buffer, bins) with or
 *                    without statistics, per step or batched (captured on first use), and moves
 *                    the host's view on to the state after that step (buffer swap, bins set), so
 *                    that the next launch picks the right graph before this one has run;
 *   gpu_step_ran:    after a synchronisation: n steps from `step` are done;
 *   gpu_step_stats:  a step's sim_stats from its control block and field total (not read
 *                    without want_stats);
 *   gpu_step_colsum_total: the field total of w column sums, added in column order as the CPU
 *                    adds them (gpu_stats_totals adds them so on the device). */
int gpu_step_upload(gpu_state *st, int64_t step, sim_err *err);
int gpu_step_launch(gpu_state *st, int want_stats, int batched, sim_err *err);
/* gpu_step_launch of gpu_step_graph_steps() batched steps, all with or all without statistics,
 * as one graph (captured on first use). */
int gpu_step_launch_run(gpu_state *st, int want_stats, sim_err *err);
int gpu_step_graph_steps(const gpu_state *st);
void gpu_step_ran(gpu_state *st, int64_t step, int n);
void gpu_step_stats(const gpu_state *st, const gpu_ctl *c, double total, int want_stats,
                    sim_stats *out);
double gpu_step_colsum_total(const double *colsum, int w);

/* Allocates the control-block rings (create); frees every ring (destroy); frees the deferred
 * statistics' snapshots (defer.cap becomes 0). */
int gpu_step_rings_alloc(gpu_state *st, sim_err *err);
void gpu_step_rings_free(gpu_state *st);
void gpu_step_defer_free(gpu_state *st);

/* Phases of the step, enqueued on st->stream (gpu_step_enqueue runs them in order; the bench
 * also times them one by one):
 *   gpu_step_decide: the tile-sum kernel over the current bins with `field`: sense, decide,
 *                    claim (queue_zeroed: the dynamic mapping's tile queue is already 0);
 *   gpu_step_move:   winners move, the deposit unless `fold`, agents counted into new tiles;
 *   gpu_step_folds:  whether the deposit goes into the first Jacobi pass (it is fused). */
int gpu_step_decide(gpu_state *st, const float *field, int queue_zeroed, sim_err *err);
int gpu_step_move(gpu_state *st, float *field, int fold, sim_err *err);
int gpu_step_folds(const gpu_state *st);

/* 1 when the deposit is folded into a single Jacobi pass. A step with statistics then folds
 * their terms into its kernels: the agents' checksum into the scatter that bins them for the
 * next step (beside the diffusion), the field's checksum and max and, in some order, its column
 * sums into the Jacobi pass; after it, gpu_stats_colsum takes those sums where every order gives
 * the same bits, else adds the rows in order. */
int gpu_step_stats_fused(const gpu_state *st);

/* Sets st->defer_want where a batched step's statistics are fused (gpu_step_stats_fused) on a
 * world of at most GPU_ST_DEFER_CELLS_MAX cells, or as HORIZON_ST_DEFER=0|1 says there (a
 * measuring aid; anything else is refused); drops the deferral's memory when not wanted. */
int gpu_step_defer_choose(gpu_state *st, sim_err *err);

/* Sets st->pdl (and st->jac.pdl): whether the step's kernels are launched with programmatic
 * dependence (gpu_pdl.cuh), from the world's size (GPU_PDL_CELLS_MAX) or HORIZON_PDL=0|1 (a
 * measuring aid; anything else is refused). */
int gpu_step_pdl_choose(gpu_state *st, sim_err *err);

/* Drops the captured graphs (after a change of tuning or pointers); _ring only the batched ones
 * with statistics (single steps and runs), which hold the column-sum ring's address. */
void gpu_step_forget(gpu_state *st);
void gpu_step_forget_ring(gpu_state *st);

/* Clears the claim words, marks the agents' cells in the occupancy bitmap and bins the agents
 * by tile into set 0 (create). */
int gpu_step_mark(gpu_state *st, sim_err *err);

/* Device bytes of the bins, the occupancy bitmap and the agents' rank (gpu_estimate_bytes). */
size_t gpu_step_bins_bytes(int64_t n, int64_t cells, int ntiles);

/* Allocates st->ab and st->d_occ (create). */
int gpu_step_alloc(gpu_state *st, sim_err *err);
void gpu_step_free(gpu_state *st);

/* The resident kernels of small worlds (gpu_step_resident.cu): all steps of a batch without
 * statistics in one launch, the phases of a step separated by barriers: of one block, whose
 * shared memory holds the whole state (tiny worlds), or of a cooperative grid.
 *   gpu_step_resident_plan: plans the one-block kernel where the tuning wants it and the world
 *                           fits (st->tiny_smem, st->tiny_geom), else sizes the grid when it is
 *                           to be used (the tuning, else worlds of at most GPU_RES_CELLS_MAX
 *                           cells) into st->res_blocks; 0 when it is not to be, or the device
 *                           cannot launch it cooperatively;
 *   gpu_step_resident_use:  whether a batch without statistics goes there (the one-block
 *                           kernel: always; the grid: res_blocks > 0, chosen automatically not
 *                           after GPU_BATCH_RUN_AFTER batched steps);
 *   gpu_step_resident_run:  n steps (1..SIM_STEP_BATCH_MAX) from `step`, one launch and one
 *                           synchronisation; out[k] as gpu_step_run gives it. want[k] (NULL:
 *                           none) asks for step k's statistics: the one-block kernel only, for
 *                           at most st->ring_cap steps (the column-sum ring's slots). */
int gpu_step_resident_plan(gpu_state *st, sim_err *err);
int gpu_step_resident_use(const gpu_state *st);

/* Whether a w x h world of n agents (its bins: ntiles tiles) fits the one-block kernel on the
 * current device: *bytes its shared memory, 0 when it does not fit (or n is 0); *g its region's
 * geometry; *room (when not NULL) the kernel's dynamic shared-memory limit on the device (0 when
 * the world is ruled out before the device is asked: no agents, or a region row too wide). */
int gpu_tiny_fit(int w, int h, int periodic, int r, int64_t n, int ntiles, gpu_hz_geom *g,
                 size_t *bytes, int *room, sim_err *err);
int gpu_step_resident_run(gpu_state *st, int64_t step, int n, const uint8_t *want,
                          sim_stats *out, sim_err *err);

/* After a batch's launches on st->stream (gpu_step_batch.cu): the control ring's n slots and the
 * column-sum ring's first nstats slots (one a step with want[k]) to the host, one wait, then
 * out[k] (gpu_step_stats). */
int gpu_step_batch_results(gpu_state *st, int64_t step, int n, const uint8_t *want, int nstats,
                           sim_stats *out, sim_err *err);

/* View operations (gpu_view.cu). */
int gpu_view_paint(gpu_state *st, int x, int y, int radius, float amount, sim_err *err);
int gpu_view_compose(gpu_state *st, const sim_view *v, uint8_t *rgba, sim_err *err);

/* Allocates bytes of device memory into *p through the allocation door (gpu_alloc.h), counting
 * them in st->bytes; out of memory becomes SIM_EDEVMEM with the bytes asked and free and the
 * hint. Release with gpu_alloc_free. */
int gpu_alloc(gpu_state *st, void **p, size_t bytes, const char *what, sim_err *err);

#endif
