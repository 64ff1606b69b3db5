/* gpu_state.h - the state of one CUDA backend instance (the opaque `void *` of the backend
 * table) and the internal entry points the backend's .cu files share. Internal to gpu/ (C++).
 *
 * Device memory, all allocated once in create: two field buffers (4 + 4 B/cell), the claim word
 * (8 B/cell: 0, or the best claim of this step), the occupancy bitmap (1 bit/cell), column sums
 * (8 B/column); per agent its cell, target and key (16 B) plus the two sets of bins (ids and
 * cells in tile order, 16 B) and the rank in the next bins (4 B); per tile two run starts and a
 * count (12 B). About 16.1 B/cell + 36 B/agent. */
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
    double *d_colsum;
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
    int dev_step_ok;

    /* Captured steps: [current field is d_buf[1]][current bins are set 1][with statistics]. */
    cudaGraphExec_t graph[2][2][2];
    int graph_nodes, graph_kernels; /* of the last capture */
    size_t bytes; /* device bytes allocated */
} gpu_state;

/* Enqueues one whole step on st->stream (the step index is read from d_ctl->step), starting from
 * the field in *cur and leaving the result in *cur (the buffers may swap). Used eagerly and under
 * graph capture alike; allocates nothing. */
int gpu_step_enqueue(gpu_state *st, float **cur, float **other, int want_stats, sim_err *err);

/* The backend's step: uploads the step index, launches the captured graph (captured on first
 * use), reads back moved and, when asked, the statistics. */
int gpu_step_run(gpu_state *st, int64_t step, int want_stats, sim_stats *out, sim_err *err);

/* Phases of the step, enqueued on st->stream (gpu_step_enqueue runs them in order; the bench
 * also times them one by one):
 *   gpu_step_decide: the tile-sum kernel over the current bins with `field`: sense, decide,
 *                    claim (queue_zeroed: the dynamic mapping's tile queue is already 0);
 *   gpu_step_move:   winners move, the deposit unless `fold`, agents counted into new tiles;
 *   gpu_step_folds:  whether the deposit goes into the first Jacobi pass (it is fused). */
int gpu_step_decide(gpu_state *st, const float *field, int queue_zeroed, sim_err *err);
int gpu_step_move(gpu_state *st, float *field, int fold, sim_err *err);
int gpu_step_folds(const gpu_state *st);

/* Drops the captured graphs (after a change of tuning or pointers). */
void gpu_step_forget(gpu_state *st);

/* Clears the claim words, marks the agents' cells in the occupancy bitmap and bins the agents
 * by tile into set 0 (create). */
int gpu_step_mark(gpu_state *st, sim_err *err);

/* Device bytes of the bins, the occupancy bitmap and the agents' rank (gpu_estimate_bytes). */
size_t gpu_step_bins_bytes(int64_t n, int64_t cells, int ntiles);

/* Allocates st->ab and st->d_occ (create). */
int gpu_step_alloc(gpu_state *st, sim_err *err);
void gpu_step_free(gpu_state *st);

/* View operations (gpu_view.cu). */
int gpu_view_paint(gpu_state *st, int x, int y, int radius, float amount, sim_err *err);
int gpu_view_compose(gpu_state *st, const sim_view *v, uint8_t *rgba, sim_err *err);

/* Allocates bytes of device memory into *p through the allocation door (gpu_alloc.h), counting
 * them in st->bytes; out of memory becomes SIM_EDEVMEM with the bytes asked and free and the
 * hint. Release with gpu_alloc_free. */
int gpu_alloc(gpu_state *st, void **p, size_t bytes, const char *what, sim_err *err);

#endif
