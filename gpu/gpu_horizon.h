/* gpu_horizon.h - horizon sums on the device: the circular-stencil tile-sum kernel in its dense
 * and sparse modes under the tile mappings, over agents binned by tile (gpu_bins.h), and the
 * naive per-agent kernel it is checked against. Internal to gpu/ (C++). */
#ifndef GPU_HORIZON_H
#define GPU_HORIZON_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "gpu_bins.h"

extern "C" {
#include "sim_status.h"
}

/* Geometry of the tiling for one grid and radius. The grid is cut into T x T tiles; a block
 * holds its tile plus a halo (R = r + 1 rows above and below: the candidates sit one cell off
 * the agent; L columns left, L = r + 2 rounded up to 4, so that loads are aligned float4 and
 * inclusive prefixes reach one column beyond every span; R columns right) as inclusive per-row
 * prefix sums I[RS][PW] of the fixed-point field modulo 2^32, RS = T + 2R, PW = L + T + R
 * rounded up to 4, and in dense mode the disk sums D[DW][DW] of the tile plus a ring of one,
 * DW = T + 2 (uint32 when `small`, else int64). small: a whole disk has at most 255 cells, so
 * its sum fits in int32 (sim_rules.h). */
typedef struct gpu_hz_geom {
    int w, h, periodic, r, small;
    int T, R, L, RS, PW, DW;
    int ntx, nty, ntiles;
} gpu_hz_geom;

/* *on = 1 unless HORIZON_HZ_RC=0 (a measuring aid) turns off the instances with the radius
 * GPU_HZ_RC compiled in: the tile-sum kernel's (gpu_hz_plan's rc) and the model engine's. Unset
 * or empty, or 1: on; any other value is refused (SIM_EINVAL, naming it). */
int gpu_hz_rc_enabled(int *on, sim_err *err);

/* A launch plan: geometry, mode (GPU_HMODE_DENSE/SPARSE), mapping (GPU_MAP_*, the one that runs:
 * GPU_MAP_SELL only where it can, see gpu_hz_plan_make), persistent grid size and dynamic shared
 * memory in bytes. */
typedef struct gpu_hz_plan {
    gpu_hz_geom g;
    int mode, mapping;
    int blocks, per_sm; /* grid size; resident blocks per multiprocessor */
    int many;           /* small disks on GPU_HZ_MANY_TILES tiles or more: the kernel instance
                           for GPU_HZ_MINB_MANY blocks */
    int rc;             /* GPU_HZ_RC: the instance whose sparse sums have that radius compiled
                           in (sparse mode, small disks, r == GPU_HZ_RC); 0: the general one */
    size_t smem;        /* of the tile-sum kernel's launch: GPU_HZ_SELL_C regions for SELL */
    size_t tile_smem;   /* of one tile: its region, and in dense mode its table */
} gpu_hz_plan;


/* Agents binned by tile as the tile-sum kernel reads them: ids[q] in tile order (q), tile t's
 * run begin[t] .. begin[t+1], and their cells, by tile order (cells[q], by_q = 1: the step's
 * own bins, gpu_step.cu) or by id (cells[ids[q]], by_q = 0: gpu_bins). order: scratch of
 * ntiles entries beside the bins, where the SELL mapping's launch writes its slice order. */
typedef struct gpu_hz_agents {
    const uint32_t *ids, *begin, *cells;
    uint32_t *order;
    int by_q;
} gpu_hz_agents;

/* The view of a gpu_bins over cells indexed by id. */
gpu_hz_agents gpu_hz_agents_of(const gpu_bins *b, const uint32_t *d_cells);

/* What the decide step needs besides the sums (all device pointers but seed/threshold). */
typedef struct gpu_decide_args {
    uint64_t seed;
    uint64_t threshold;                 /* sim_noise_threshold(noise) */
    const unsigned long long *d_step;   /* steps completed before this one */
    unsigned long long *d_claim;        /* per cell: 0, or the best claim of this step */
    const uint32_t *d_occ;              /* occupancy bitmap: bit c of word c/32, cell c holds an
                                         * agent (at the start of the step) */
    uint32_t *d_target;                 /* by tile order q: claimed cell, or the agent's own */
    unsigned long long *d_key;          /* by tile order q: the claim key when it claimed */
    int queue_zeroed;                   /* the dynamic mapping's counter is already 0 */
    int pdl;                            /* launch with programmatic dependence (gpu_pdl.cuh) */
} gpu_decide_args;

/* Fills g for a grid and radius (chooses the tile side from the shared memory it needs). */
void gpu_hz_geometry(int w, int h, int periodic, int r, gpu_hz_geom *g);

/* Fills g for one tile that covers the whole w x h grid (the one-block kernel of tiny worlds,
 * gpu_step_resident.cu): region rows RS = h + 2R, pitch PW = L + w + R rounded up to 4, region
 * origin (-L, -R); sparse sums only (DW = 0). */
void gpu_hz_geometry_whole(int w, int h, int periodic, int r, gpu_hz_geom *g);

/* Mode for n agents: `forced` when not GPU_HMODE_AUTO (dense falls back to sparse when its
 * shared memory does not fit), else from density and radius (gpu_policy.h). */
int gpu_hz_choose_mode(const gpu_hz_geom *g, int64_t n, int forced);

/* Sets the kernels' shared-memory limit and sizes the persistent grid from occupancy. A
 * GPU_MAP_SELL plan runs as GPU_MAP_DYNAMIC (p->mapping says so) in dense mode, or where the
 * GPU_HZ_SELL_C regions of a slice do not fit a block's shared memory (GPU_HZ_SMEM_MAX or the
 * device's, less the kernel's static). */
int gpu_hz_plan_make(const gpu_hz_geom *g, int mode, int mapping, gpu_hz_plan *p, sim_err *err);

/* The mapping a plan gets when the tuning leaves it automatic: GPU_HZ_MAPPING, or N from the
 * environment variable HORIZON_HZ_MAPPING=N (1..5, GPU_MAP_*; a measuring aid, so that whole
 * runs can be timed under each mapping; empty counts as unset). SIM_EINVAL naming the variable
 * for another value. */
int gpu_hz_auto_mapping(int *mapping, sim_err *err);

/* Tile-sum kernel, decide flavour: for every binned agent the 9 candidate sums, the decision
 * (sim_decide) and the claim (64-bit atomicMax) of an empty target. d_queue: one counter for the
 * dynamic and SELL mappings (reset here unless a->queue_zeroed). The SELL mapping launches its
 * slice-order kernel first, on the same stream (into ag->order). */
int gpu_hz_decide(const gpu_hz_plan *p, const gpu_hz_agents *ag, const float *d_field,
                  const gpu_decide_args *a, unsigned *d_queue, cudaStream_t s, sim_err *err);

/* Tile-sum kernel, sums flavour: d_sums[9*i + c] for the n binned cells (b->d_order: the SELL
 * mapping's scratch). */
int gpu_hz_sums(const gpu_hz_plan *p, const gpu_bins *b, const float *d_field,
                const uint32_t *d_cells, int64_t *d_sums, unsigned *d_queue, cudaStream_t s,
                sim_err *err);

/* The naive baseline: one thread per cell looping over the (2r+1)^2 box of each candidate. */
int gpu_hz_naive(const gpu_hz_geom *g, const float *d_field, const uint32_t *d_cells, int64_t n,
                 int64_t *d_sums, cudaStream_t s, sim_err *err);

#endif
