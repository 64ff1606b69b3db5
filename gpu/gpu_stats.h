/* gpu_stats.h - statistics and checksums on the device, all of them order-independent or in a
 * fixed order, so that they equal the CPU backend's bits: column sums in double (rows in order,
 * one thread per column; or, where every order gives the same bits, sim_colsum_exact, the
 * fused pass's sums), field max through an ordered-integer atomicMax, checksums as
 * integer sums modulo 2^64. Internal to gpu/ (C++). */
#ifndef GPU_STATS_H
#define GPU_STATS_H

#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "sim_status.h"
}

/* The device control block of a step: inputs (step) and reduced outputs. */
typedef struct gpu_ctl {
    unsigned long long step;     /* steps completed before this one (input) */
    unsigned long long moved;
    unsigned long long checksum;
    unsigned max_key;            /* gpu_float_key of the field max; 0: no non-NaN cell */
    unsigned residual;           /* float bits of max |T'-T|, a non-negative float */
    unsigned queue;              /* tile queue of the dynamic mapping */
    /* The fused pass's cells (gpu_colsum_exact): the largest magnitude's bits (bits & 0x7fffffff)
     * and, as 2^32 minus it, the smallest nonzero one's (0: every cell a zero). */
    unsigned mag_hi, mag_lo;
} gpu_ctl;

/* Decodes a max_key to the float (-INFINITY for 0, the CPU's start value). */
float gpu_float_from_key(unsigned key);

/* Zeroes every output of *d_ctl (not the step). */
int gpu_ctl_reset(gpu_ctl *d_ctl, cudaStream_t s, sim_err *err);

/* One pass over the field: d_colsum[x] = sum over rows in order (double), field max and the
 * cells' checksum terms into d_ctl. */
int gpu_stats_field(const float *d_field, int w, int h, double *d_colsum, gpu_ctl *d_ctl,
                    cudaStream_t s, sim_err *err);

/* gpu_stats_field with the checksum terms of cells base + i (field f of a model: base =
 * f * cells, sim_checksum_field_cell). */
int gpu_stats_field_at(const float *d_field, int w, int h, uint64_t base, double *d_colsum,
                       gpu_ctl *d_ctl, cudaStream_t s, sim_err *err);

/* The column sums alone (d_colsum[x], as gpu_stats_field), for a step whose kernels add the
 * cells' checksum terms and the max themselves (gpu_step_stats_fused). With d_part (w doubles):
 * the fused pass that wrote d_field also added each column's cells into it in some order, and
 * noted the cells' magnitudes in *d_ex (mag_hi, mag_lo); where gpu_colsum_exact holds, those
 * are the column sums; else the field's rows are added in order as without it. d_part is left
 * zero for the next pass. */
int gpu_stats_colsum(const float *d_field, int w, int h, double *d_colsum, const gpu_ctl *d_ex,
                     double *d_part, cudaStream_t s, sim_err *err);

/* The field totals of m steps from their column sums (colsum_ring, w each):
 * total_ring[j] = the sum of colsum_ring[j * w + x] over x in order (0.0 first), the additions
 * of gpu_step_colsum_total, so the same bits. One warp a step. */
int gpu_stats_totals(const double *colsum_ring, int w, int m, double *total_ring, cudaStream_t s,
                     sim_err *err);

/* Field max only (for compose's automatic range) into d_ctl->max_key. */
int gpu_stats_max(const float *d_field, int64_t cells, gpu_ctl *d_ctl, cudaStream_t s,
                  sim_err *err);

/* The agents' checksum terms into d_ctl->checksum. */
int gpu_stats_agents(const uint32_t *d_cells, int64_t n, gpu_ctl *d_ctl, cudaStream_t s,
                     sim_err *err);

/* Stores a step's results into slots of the read-back rings of a batch (gpu_step_batch):
 * ctl_ring[pos[0]] = *d_ctl, and when colsum_ring is not NULL, colsum_ring[pos[1] * w ..] = the
 * w column sums; then zeroes d_ctl's outputs as gpu_ctl_reset does (the next step of the batch
 * starts without a reset of its own), and pos[0] and (with column sums, or `take`: the step's
 * column sums come later, beside it or deferred) pos[1] advance by one; with ctl_of (a deferred
 * step, gpu_stats_defer), ctl_of[pos[1] % cap] = pos[0]. The slots come from device memory, not
 * from the launch, so that the one captured graph of a step serves every slot; the host zeroes
 * pos before a batch. One block: the positions are read and advanced by the same thread, in the
 * order of the stream. pdl: launched with programmatic dependence (gpu_pdl.cuh). */
int gpu_stats_ring_store(gpu_ctl *d_ctl, const double *d_colsum, int w, gpu_ctl *ctl_ring,
                         double *colsum_ring, int take, unsigned *ctl_of, unsigned cap,
                         unsigned *pos, int pdl, cudaStream_t s, sim_err *err);

/* Deferred statistics (a small world's batch, gpu_step_batch.cu): a step with statistics leaves
 * only its residual and moved in its control block; its pass copies the field it writes into
 * snapshot slot pos[1] % cap (snap, `cells` floats a slot), its scatter the agents' (id, cell) in
 * tile order into the same slot of asnap (n a slot), and its ring store notes its control slot
 * in ctl_of. gpu_stats_defer later computes, for stats steps j0 .. j0 + m - 1 of the batch (m <=
 * cap), all their column sums at once (a warp per 32 columns of each step) and their checksum
 * terms and max, into colsum_ring slot j and the control slot ctl_of[j % cap]: the column sums'
 * chain of dependent additions (~10 us at 512 rows) then runs beside the other steps' instead of
 * after its own step. */
typedef struct gpu_defer {
    float *snap;      /* cap slots of cells rounded up to 4 */
    uint2 *asnap;     /* cap x n: (id, cell) */
    unsigned *ctl_of; /* cap */
    unsigned cap;
    int64_t cells, n;
} gpu_defer;

/* The floats of a snapshot slot: the cells rounded up to 4, so that every slot starts on 16
 * bytes (the hashing reads four cells at a time). */
__host__ __device__ inline size_t gpu_defer_slot_floats(int64_t cells)
{
    return (size_t)((cells + 3) & ~(int64_t)3);
}

int gpu_stats_defer(const gpu_defer *d, int w, int h, int j0, int m, gpu_ctl *ctl_ring,
                    double *colsum_ring, cudaStream_t s, sim_err *err);

#endif
