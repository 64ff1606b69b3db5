/* gpu_stats.cuh - a cell's statistics terms and the block-wide reductions (device code),
 * shared by the statistics kernels (gpu_stats.cu) and the step kernels that fold the
 * statistics' terms into their own passes (the fused Jacobi pass, the move). Internal to gpu/
 * (CUDA C++). */
#ifndef GPU_STATS_CUH
#define GPU_STATS_CUH

#include "gpu_stats.h"

extern "C" {
#include "sim_rules.h"
}

/* A float's bits mapped to an unsigned whose order is the float order (for atomicMax); see
 * gpu_float_from_key for the way back. */
__device__ __forceinline__ unsigned gpu_float_key(float v)
{
    unsigned b = __float_as_uint(v);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

/* A cell's statistics terms: its checksum term (sim_checksum_cell_scaled, from the cell index
 * times SIM_CHECKSUM_GOLDEN) into cs, and its value into the max key mk unless it is NaN. */
__device__ __forceinline__ void gpu_cell_terms(unsigned long long &cs, unsigned &mk,
                                               unsigned long long index_golden, float v)
{
    cs += sim_checksum_cell_scaled(index_golden, __float_as_uint(v));
    if (v == v)
        mk = max(mk, gpu_float_key(v));
}

/* The residual, max |o - c| over a sweep's cells, with the CPU's "if (v > m) m = v" (a NaN
 * difference never enters). */
__device__ __forceinline__ void gpu_res_update(float &m, float o, float c)
{
    float d = fabsf(SIM_FSUB(o, c));
    if (d > m)
        m = d;
}

/* Warp max of the residual m, then one atomicMax of the float bits into *res (monotone for
 * non-negative floats). Every lane of the warp must call it. */
__device__ __forceinline__ void gpu_res_commit(float m, unsigned *res)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        float t = __shfl_xor_sync(0xffffffffu, m, o);
        m = t > m ? t : m;
    }
    if ((threadIdx.x & 31) == 0 && m > 0.0f)
        atomicMax(res, __float_as_uint(m));
}

/* Block-wide sum (mod 2^64) of cs and max of mk, then one atomic each into ctl (the sum only
 * when do_sum). Every thread of the (1-D) block must call it. */
__device__ __forceinline__ void gpu_commit_sum_max(unsigned long long cs, unsigned mk,
                                                   gpu_ctl *ctl, int do_sum)
{
    __shared__ unsigned long long s_cs[32];
    __shared__ unsigned s_mk[32];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        cs += __shfl_xor_sync(0xffffffffu, cs, o);
        unsigned t = __shfl_xor_sync(0xffffffffu, mk, o);
        mk = t > mk ? t : mk;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    if (lane == 0) {
        s_cs[warp] = cs;
        s_mk[warp] = mk;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int i = 1; i < nw; i++) {
            cs += s_cs[i];
            mk = s_mk[i] > mk ? s_mk[i] : mk;
        }
        if (do_sum && cs)
            atomicAdd(&ctl->checksum, cs);
        if (mk)
            atomicMax(&ctl->max_key, mk);
    }
}

#endif
