/* gpu_jacobi.h - diffusion on the device: Jacobi sweeps for the three boundary kinds and any
 * grid size, one sweep per pass (streaming) or K sweeps fused in one pass (temporal blocking),
 * with decay folded into the last pass and the residual of the last sweep on request.
 * Internal to gpu/ (C++). */
#ifndef GPU_JACOBI_H
#define GPU_JACOBI_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "gpu_stats.h"

extern "C" {
#include "sim_scenario.h"
#include "sim_status.h"
}

/* The parameters of a sweep, with the float constants computed once on the host exactly as the
 * CPU backend computes them (one_minus_a = 1.0f - a, keep = 1.0f - decay, both in float). */
typedef struct gpu_jac {
    int w, h, boundary;
    float fixed_top, fixed_bottom, fixed_left, fixed_right;
    float a, one_minus_a, keep;
    int js_rows;  /* rows per warp of the one-sweep kernel; 0: the policy's choice */
    int js_batch; /* rows it loads ahead (4 or 8); 0: the policy's choice (GPU_JS_BATCH) */
    /* Not NULL: a device word; while it is non-zero every kernel of a run returns at once
     * (the model engine's queued steps after one that could not run; gpu_model.h). */
    const unsigned *halt;
    int pdl; /* its kernels launched with programmatic dependence (gpu_pdl.cuh); 0 unless set */
} gpu_jac;

void gpu_jac_from_scenario(const sim_scenario *sc, gpu_jac *p);

/* Number of passes gpu_jacobi_run launches for `sweeps` with at most fuse_max per pass. Each
 * pass swaps the roles of the two buffers. */
int gpu_jacobi_passes(int sweeps, int fuse_max);

/* Runs `sweeps` sweeps starting from *d_cur, ping-ponging with *d_other (the pointers are
 * swapped so that *d_cur holds the result). decay: multiply by keep at the end (in the last pass;
 * a separate pass when sweeps is 0). d_residual: when not NULL, atomicMax of the float bits of
 * max |T'-T| over the last sweep (the caller zeroes it). No allocation; stream-ordered. */
int gpu_jacobi_run(const gpu_jac *p, float **d_cur, float **d_other, int sweeps, int fuse_max,
                   int decay, unsigned *d_residual, cudaStream_t s, sim_err *err);

/* Sweeps of the first pass (0 for no sweeps): a deposit can be folded into it when >= 2. */
int gpu_jacobi_first_pass(int sweeps, int fuse_max);

/* gpu_jacobi_run with the agents' deposit folded into the first pass, which must be fused
 * (gpu_jacobi_first_pass >= 2): every cell whose bit is set in the occupancy bitmap d_occ
 * (bit c of word c/32) counts as cell + deposit. d_occ NULL: no deposit. */
int gpu_jacobi_run_dep(const gpu_jac *p, float **d_cur, float **d_other, int sweeps, int fuse_max,
                       int decay, const uint32_t *d_occ, float deposit, unsigned *d_residual,
                       cudaStream_t s, sim_err *err);

/* Where the one pass of a deposit (gpu_jacobi_run_terms) also writes the field it writes
 * (deferred statistics, gpu_stats.h's gpu_defer): slot pos[1] % cap of base, each slot the
 * cells rounded up to 4. */
typedef struct gpu_snap {
    float *base;
    const unsigned *pos;
    unsigned cap;
} gpu_snap;

/* gpu_jacobi_run_dep whose one pass (the deposit's, gpu_jacobi_passes == 1) also adds the
 * statistics' terms of the field it writes into d_terms: every cell's checksum term
 * (sim_checksum_cell of cell i, the cells 0 .. w*h-1) into checksum, its max into max_key
 * (gpu_stats.h), so that the statistics need no pass of their own for them; with snap, that
 * pass also copies the field into the snapshot slot; with d_terms, d_colpart (w doubles, zero
 * before the pass; required) gets each tile's sum of each column's cells it writes, added in
 * some order, and their magnitudes go into d_terms' mag_hi and mag_lo, for gpu_stats_colsum's
 * d_part. d_terms and snap NULL: gpu_jacobi_run_dep. */
int gpu_jacobi_run_terms(const gpu_jac *p, float **d_cur, float **d_other, int sweeps,
                         int fuse_max, int decay, const uint32_t *d_occ, float deposit,
                         unsigned *d_residual, gpu_ctl *d_terms, const gpu_snap *snap,
                         double *d_colpart, cudaStream_t s, sim_err *err);

/* Sets the kernels' shared-memory limits once per process/device. */
int gpu_jacobi_init(sim_err *err);

#endif
