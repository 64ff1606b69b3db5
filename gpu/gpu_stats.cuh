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

/* sim_mix64 on 32-bit halves, the same bits: each product modulo 2^64 is the low halves' wide
 * product with the two cross products added into its high half, three multiply-adds (the
 * compiler's own lowering of a 64-bit product spends a fourth instruction adding the high
 * halves), and each xor-shift a funnel shift for the low half. */
__device__ __forceinline__ void gpu_xorshift(unsigned &lo, unsigned &hi, int s)
{
    lo ^= __funnelshift_r(lo, hi, s);
    hi ^= hi >> s;
}

/* (hi:lo) times the 64-bit constant C, modulo 2^64. */
template <unsigned long long C>
__device__ __forceinline__ void gpu_mul64(unsigned &lo, unsigned &hi)
{
    constexpr unsigned CL = (unsigned)C, CH = (unsigned)(C >> 32);
    unsigned l, h;
    asm("{\n\t.reg .u32 t;\n\t"
        "mul.hi.u32 t, %2, %4;\n\t"
        "mad.lo.u32 t, %2, %5, t;\n\t"
        "mad.lo.u32 %1, %3, %4, t;\n\t"
        "mul.lo.u32 %0, %2, %4;\n\t}"
        : "=r"(l), "=r"(h)
        : "r"(lo), "r"(hi), "n"(CL), "n"(CH));
    lo = l;
    hi = h;
}

__device__ __forceinline__ unsigned long long gpu_mix64(unsigned lo, unsigned hi)
{
    gpu_xorshift(lo, hi, SIM_MIX_SHIFT1);
    gpu_mul64<SIM_MIX_MUL1>(lo, hi);
    gpu_xorshift(lo, hi, SIM_MIX_SHIFT2);
    gpu_mul64<SIM_MIX_MUL2>(lo, hi);
    gpu_xorshift(lo, hi, SIM_MIX_SHIFT3);
    return (unsigned long long)hi << 32 | lo;
}

/* sim_checksum_agent on gpu_mix64. */
__device__ __forceinline__ unsigned long long gpu_checksum_agent(uint32_t id, uint32_t cell)
{
    return gpu_mix64(cell ^ (unsigned)SIM_CHECKSUM_AGENT_XOR,
                     id ^ (unsigned)(SIM_CHECKSUM_AGENT_XOR >> 32));
}

/* A thread's running statistics terms over the cells it hashes: the checksum terms (mod 2^64),
 * the values' fmaxf (NaN never enters) and the least float bits seen (0 once a +0 was): two
 * instructions a cell for the max in place of an ordered key's five. gpu_terms_key orders -0
 * below +0, as the keys do. */
struct gpu_terms {
    unsigned long long cs;
    float max;
    unsigned low;
};

__device__ __forceinline__ gpu_terms gpu_terms_none()
{
    return gpu_terms{0ull, -INFINITY, 0xffffffffu};
}

/* cs += a * b, one wide multiply-add. */
__device__ __forceinline__ void gpu_mad_wide(unsigned long long &cs, unsigned a, unsigned b)
{
    asm("mad.wide.u32 %0, %1, %2, %0;" : "+l"(cs) : "r"(a), "r"(b));
}

/* A cell's terms: its checksum term (sim_checksum_cell_scaled) from g = its index times
 * SIM_CHECKSUM_GOLDEN, given as g_hi and g_lo | 1, and its value. */
__device__ __forceinline__ void gpu_cell_terms_g(gpu_terms &t, unsigned g_hi, unsigned g_lo1,
                                                 float v)
{
    const unsigned b = __float_as_uint(v);
    gpu_mad_wide(t.cs, b ^ g_hi, g_lo1);
    t.max = fmaxf(t.max, v);
    t.low = min(t.low, b);
}

/* gpu_cell_terms_g from g itself. */
__device__ __forceinline__ void gpu_cell_terms(gpu_terms &t, unsigned long long index_golden,
                                               float v)
{
    gpu_cell_terms_g(t, (unsigned)(index_golden >> 32), (unsigned)index_golden | 1u, v);
}

/* The magnitudes of a fused pass's cells, for sim_colsum_exact, kept as sim_rules.h's keys
 * (k = bits + bits: hi2 the largest key, lo2 the least k - 2). A cell costs an add, half a three-input max and an
 * add-and-min (Hopper's VIMNMX3 and VIADDMNMX), where the magnitude's mask, the max, a negation
 * and a max cost three and a half. */
struct gpu_mags {
    unsigned hi2, lo2;
};

__device__ __forceinline__ gpu_mags gpu_mags_none()
{
    return gpu_mags{0u, 0xffffffffu};
}

__device__ __forceinline__ void gpu_mags_add2(gpu_mags &g, float a, float b)
{
    const unsigned ka = __float_as_uint(a) * 2u, kb = __float_as_uint(b) * 2u;
    g.hi2 = max(g.hi2, max(ka, kb));
    g.lo2 = min(ka - 2u, g.lo2);
    g.lo2 = min(kb - 2u, g.lo2);
}

__device__ __forceinline__ void gpu_mags_add(gpu_mags &g, float a)
{
    const unsigned ka = __float_as_uint(a) * 2u;
    g.hi2 = max(g.hi2, ka);
    g.lo2 = min(ka - 2u, g.lo2);
}

/* The magnitudes' keys g (already reduced over the threads that add them) into ctl's words by
 * one atomicMax each: the largest magnitude's bits, and 2^32 minus the smallest nonzero one's
 * (0: only zeros). */
__device__ __forceinline__ void gpu_put_mags(gpu_mags g, gpu_ctl *ctl)
{
    const unsigned hi = sim_mag_hi_of_keys(g.hi2), lo = sim_mag_lo_of_keys(g.lo2);
    if (hi)
        atomicMax(&ctl->mag_hi, hi);
    if (lo)
        atomicMax(&ctl->mag_lo, lo);
}

/* sim_colsum_exact of the magnitudes a fused pass left in *ex. */
__device__ __forceinline__ bool gpu_colsum_exact(const gpu_ctl *ex, int h)
{
    return sim_colsum_exact(ex->mag_hi, ex->mag_lo, h) != 0;
}

/* The max key of t (for atomicMax): a zero maximum is +0 when a +0 was seen. */
__device__ __forceinline__ unsigned gpu_terms_key(const gpu_terms &t)
{
    return gpu_float_key(t.max == 0.0f ? (t.low == 0u ? 0.0f : -0.0f) : t.max);
}

/* The residual, max |o - c| over a sweep's cells, with the CPU's "if (v > m) m = v" (a NaN
 * difference never enters). */
__device__ __forceinline__ void gpu_res_update(float &m, float o, float c)
{
    m = fmaxf(m, fabsf(SIM_FSUB(o, c))); /* m is never NaN: fmaxf drops a NaN difference */
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

/* Warp sum (mod 2^64) of cs: the low word's two 16-bit halves and the high word each added
 * by one warp reduction (exact: 32 halves stay under 2^21), then put together. Three
 * reductions where five shuffle rounds of both words took twenty instructions. Every lane of
 * the warp must call it. */
__device__ __forceinline__ unsigned long long gpu_warp_sum64(unsigned long long cs)
{
    const unsigned lo = (unsigned)cs, hi = (unsigned)(cs >> 32);
    const unsigned s0 = __reduce_add_sync(0xffffffffu, lo & 0xffffu);
    const unsigned s1 = __reduce_add_sync(0xffffffffu, lo >> 16);
    const unsigned s2 = __reduce_add_sync(0xffffffffu, hi);
    return ((unsigned long long)s2 << 32) + ((unsigned long long)s1 << 16) + s0;
}

/* Block-wide sum (mod 2^64) of cs and max of mk, then one atomic each into ctl (the sum only
 * when do_sum). Every thread of the (1-D) block must call it. */
__device__ __forceinline__ void gpu_commit_sum_max(unsigned long long cs, unsigned mk,
                                                   gpu_ctl *ctl, int do_sum)
{
    __shared__ unsigned long long s_cs[32];
    __shared__ unsigned s_mk[32];
    cs = gpu_warp_sum64(cs);
    mk = __reduce_max_sync(0xffffffffu, mk);
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
