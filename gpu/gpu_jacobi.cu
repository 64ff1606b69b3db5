/* gpu_jacobi.cu - Jacobi sweeps on the device (see gpu_jacobi.h).
 *
 * Bytes first: a sweep must read and write every cell once, 8 B/cell, so one sweep per pass is
 * bounded by the copy bandwidth; the streaming kernel walks each column strip downwards with the
 * north/centre/south rows in registers and east/west from warp shuffles, reading each cell from
 * DRAM once. Only fusing K sweeps in one pass (a tile plus a halo of K in shared memory, the
 * valid area shrinking by one per sweep) goes below 8 B/cell/sweep: ~(1 + 2K/RW)(1 + 2K/RH)*4 + 4
 * bytes per cell for K sweeps.
 *
 * Arithmetic: sim_jacobi (sim_rules.h) with __fmul_rn/__fadd_rn, the same order as the CPU. The
 * boundary rules per neighbour outside the grid: periodic wraps, wall uses the cell itself, fixed
 * uses the edge's value. */
#include <atomic>
#include <limits.h>
#include <stdlib.h>
#include <cuda_pipeline.h>

#include "gpu_backend.h"
#include "gpu_check.h"
#include "gpu_jacobi.h"
#include "gpu_pdl.cuh"
#include "gpu_policy.h"
#include "gpu_stats.cuh"

extern "C" {
#include "sim_rules.h"
}

#define FULL_MASK 0xffffffffu

void gpu_jac_from_scenario(const sim_scenario *sc, gpu_jac *p)
{
    p->w = sc->width;
    p->h = sc->height;
    p->boundary = sc->boundary;
    p->fixed_top = sc->fixed_top;
    p->fixed_bottom = sc->fixed_bottom;
    p->fixed_left = sc->fixed_left;
    p->fixed_right = sc->fixed_right;
    p->a = sc->diffusion;
    p->one_minus_a = 1.0f - sc->diffusion;
    p->keep = 1.0f - sc->decay;
    p->js_rows = 0;
    p->js_batch = 0;
    p->halt = NULL;
    p->pdl = 0;
}

__device__ __forceinline__ int jwrap(int v, int n)
{
    v %= n;
    return v < 0 ? v + n : v;
}


/* ------------------------------------------------------------------------------------------ */
/* One sweep per pass                                                                          */

template <int VEC> struct jvec {
    float v[VEC];
};

template <int VEC>
__device__ __forceinline__ jvec<VEC> jload(const float *__restrict__ row, int x0, bool act)
{
    jvec<VEC> r;
    if (VEC == 4) {
        float4 t = act ? *reinterpret_cast<const float4 *>(row + x0) : make_float4(0, 0, 0, 0);
        r.v[0] = t.x;
        r.v[VEC > 1 ? 1 : 0] = t.y;
        r.v[VEC > 2 ? 2 : 0] = t.z;
        r.v[VEC > 3 ? 3 : 0] = t.w;
    } else {
        r.v[0] = act ? row[x0] : 0.0f;
    }
    return r;
}

template <int VEC> __device__ __forceinline__ jvec<VEC> jfill(float f)
{
    jvec<VEC> r;
#pragma unroll
    for (int j = 0; j < VEC; j++)
        r.v[j] = f;
    return r;
}

/* Thread mapping: blockDim (32, GPU_JS_WARPS); a thread owns VEC consecutive columns and walks
 * GPU_JS_ROWS rows down, GPU_JS_BATCH rows at a time: the batch's south rows and edge values are
 * all loaded before any is used, so each thread keeps several 16-byte loads in flight (one at a
 * time leaves the memory system idle between rows). Lanes at a warp's edges take their outer
 * neighbour from global memory (an L1/L2 hit: the neighbouring warp loads it). No shared memory. */
template <int BND, int VEC, int B>
__global__ void __launch_bounds__(32 * GPU_JS_WARPS)
js_kernel(gpu_jac p, const float *__restrict__ src, float *__restrict__ dst, unsigned *res,
          int decay, int rows)
{
    gpu_pdl_wait(); /* the field of the kernels before (gpu_pdl.cuh) */
    gpu_pdl_release();
    if (p.halt && *p.halt)
        return; /* the whole grid */
    const int lane = threadIdx.x;
    const int x0 = ((int)blockIdx.x * 32 + lane) * VEC;
    const int yb = ((int)blockIdx.y * GPU_JS_WARPS + (int)threadIdx.y) * rows;
    if (yb >= p.h)
        return; /* whole warp */
    const int ye = yb + rows < p.h ? yb + rows : p.h;
    const bool act = x0 < p.w;
    const size_t w = (size_t)p.w;
    const int xw = x0 - 1, xe = x0 + VEC;
    /* Where the outer neighbours come from: another lane, global memory, or the boundary. */
    const bool w_load = act && (xw < 0 ? BND == SIM_BOUNDARY_PERIODIC : lane == 0);
    const bool e_load = act && (xe >= p.w ? BND == SIM_BOUNDARY_PERIODIC : lane == 31);
    const int w_col = xw < 0 ? p.w - 1 : xw, e_col = xe >= p.w ? xe - p.w : xe;

    jvec<VEC> c = jload<VEC>(src + yb * w, x0, act), n;
    if (yb > 0)
        n = jload<VEC>(src + (yb - 1) * w, x0, act);
    else if (BND == SIM_BOUNDARY_PERIODIC)
        n = jload<VEC>(src + (p.h - 1) * w, x0, act);
    else if (BND == SIM_BOUNDARY_WALL)
        n = c;
    else
        n = jfill<VEC>(p.fixed_top);
    float m = 0.0f;
    for (int y = yb; y < ye; y += B) {
        jvec<VEC> raw[B];
        float wl[B], el[B];
#pragma unroll
        for (int b = 0; b < B; b++) {
            const int yy = y + b, ys = yy + 1 < p.h ? yy + 1 : 0;
            const bool live = yy < ye;
            raw[b] = jload<VEC>(src + ys * w, x0,
                                act && live && (yy + 1 < p.h || BND == SIM_BOUNDARY_PERIODIC));
            const float *row = src + yy * w;
            wl[b] = live && w_load ? row[w_col] : 0.0f;
            el[b] = live && e_load ? row[e_col] : 0.0f;
        }
#pragma unroll
        for (int b = 0; b < B; b++) {
            const int yy = y + b;
            if (yy >= ye)
                break; /* uniform across the warp */
            jvec<VEC> s;
            if (yy + 1 < p.h || BND == SIM_BOUNDARY_PERIODIC)
                s = raw[b];
            else if (BND == SIM_BOUNDARY_WALL)
                s = c;
            else
                s = jfill<VEC>(p.fixed_bottom);
            float wv = __shfl_up_sync(FULL_MASK, c.v[VEC - 1], 1);
            float ev = __shfl_down_sync(FULL_MASK, c.v[0], 1);
            if (act) {
                if (w_load)
                    wv = wl[b];
                else if (xw < 0)
                    wv = BND == SIM_BOUNDARY_WALL ? c.v[0] : p.fixed_left;
                if (e_load)
                    ev = el[b];
                else if (xe >= p.w)
                    ev = BND == SIM_BOUNDARY_WALL ? c.v[VEC - 1] : p.fixed_right;
                float o[VEC];
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    float e = j < VEC - 1 ? c.v[j < VEC - 1 ? j + 1 : j] : ev;
                    float wj = j > 0 ? c.v[j > 0 ? j - 1 : 0] : wv;
                    o[j] = sim_jacobi(c.v[j], n.v[j], s.v[j], e, wj, p.a, p.one_minus_a);
                    if (res)
                        gpu_res_update(m, o[j], c.v[j]);
                    if (decay)
                        o[j] = SIM_FMUL(o[j], p.keep);
                }
                float *out = dst + yy * w + x0;
                if (VEC == 4)
                    *reinterpret_cast<float4 *>(out) = make_float4(
                        o[0], o[VEC > 1 ? 1 : 0], o[VEC > 2 ? 2 : 0], o[VEC > 3 ? 3 : 0]);
                else
                    out[0] = o[0];
            }
            n = c;
            c = raw[b];
        }
    }
    if (res)
        gpu_res_commit(m, res);
}

/* ------------------------------------------------------------------------------------------ */
/* K sweeps per pass                                                                           */

/* One update of the cell at grid (gx, gy) for the fused kernel: periodic regions hold wrapped
 * copies, so the stencil is unconditional; bounded grids substitute the boundary values at the
 * edges and leave cells outside the grid at 0 (never read by a cell inside). */
template <int BND>
__device__ __forceinline__ float jf_update(const gpu_jac &p, float c, float n, float s, float e,
                                           float w, int gx, int gy)
{
    if (BND != SIM_BOUNDARY_PERIODIC) {
        if (gx < 0 || gx >= p.w || gy < 0 || gy >= p.h)
            return 0.0f;
        const bool wall = BND == SIM_BOUNDARY_WALL;
        if (gy == 0)
            n = wall ? c : p.fixed_top;
        if (gy == p.h - 1)
            s = wall ? c : p.fixed_bottom;
        if (gx == 0)
            w = wall ? c : p.fixed_left;
        if (gx == p.w - 1)
            e = wall ? c : p.fixed_right;
    }
    return sim_jacobi(c, n, s, e, w, p.a, p.one_minus_a);
}

/* Region height: 32 rows for K <= 2 (32 KB of shared memory: more blocks per multiprocessor),
 * 64 rows for deeper fusion (less halo work per written cell). */
__host__ __device__ constexpr int jf_rh(int K)
{
    return K <= 2 ? GPU_JF_RH_SMALL : GPU_JF_RH;
}

/* The launch bounds' blocks a multiprocessor of a fused pass: the vector instances with regions
 * of 32 rows (32 KB of shared memory, room for 7 blocks) GPU_JF_MINB_SMALL, which keeps them
 * at 40 registers (41 to 47 rounded up to 48 held 5 blocks), without spills; the scalar ones
 * 5 (6 would spill), the 64-row ones 3 (their shared memory holds no more). */
#ifndef GPU_JF_MINB_SMALL
#define GPU_JF_MINB_SMALL 6
#endif
__host__ __device__ constexpr int jf_minb(int K, bool VEC)
{
    return jf_rh(K) > 32 ? 3 : VEC ? GPU_JF_MINB_SMALL : 5;
}

/* The region's halo left and right of the written tile: K columns, or with VEC K rounded up to
 * 4, so that a region row starts on a 16-byte boundary of a grid row and every lane moves its
 * four columns as one float4 (see jf_kernel). */
__host__ __device__ constexpr int jf_hx(int K, bool VEC)
{
    return VEC ? (K + 3) & ~3 : K;
}

/* Issues the asynchronous copies (cp.async) of a vector region (jf_kernel's VEC: rows start on
 * 16-byte boundaries, the wrap is one add or subtract) whose first cell is grid (gx0, gy0) into
 * buf: one 16-byte copy for each of the thread's RPW rows. DEP: the occupancy word of each of
 * its groups into ow[q] and the group's bit offset over 4 into sh (3 bits a row; the offset is
 * a multiple of 4 since the width and gx are), for jf_dep_vec once the words are needed. */
template <int RPW, bool DEP>
__device__ __forceinline__ void jf_issue_vec(const gpu_jac &p, const float *__restrict__ src,
                                             const uint32_t *__restrict__ occ, float *buf,
                                             int gx0, int gy0, uint32_t (&ow)[RPW], uint32_t &sh)
{
    static_assert(3 * RPW <= 32, "a row's offset in 3 bits of sh");
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    sh = 0;
#pragma unroll
    for (int q = 0; q < RPW; q++) {
        const int rr = warp * RPW + q;
        int gy = gy0 + rr, gx = gx0 + 4 * lane;
        gy = gy < 0 ? gy + p.h : (gy >= p.h ? gy - p.h : gy);
        gx = gx < 0 ? gx + p.w : (gx >= p.w ? gx - p.w : gx);
        const size_t gi = (size_t)gy * p.w + gx;
        __pipeline_memcpy_async(&buf[rr * GPU_JF_RW + 4 * lane], &src[gi], 4 * sizeof(float));
        if (DEP) {
            ow[q] = __ldg(&occ[gi >> 5]);
            sh |= (uint32_t)((gi & 31) >> 2) << (3 * q);
        }
    }
}

/* The deposit bits of jf_issue_vec's groups: bit 4q + k for column k of the thread's row q. */
template <int RPW>
__device__ __forceinline__ uint32_t jf_dep_vec(const uint32_t (&ow)[RPW], uint32_t sh)
{
    uint32_t dep = 0;
#pragma unroll
    for (int q = 0; q < RPW; q++)
        dep |= ((ow[q] >> (4 * ((sh >> (3 * q)) & 7u))) & 0xfu) << (4 * q);
    return dep;
}

/* Adds the deposit to the cells of the thread's own copies whose bit is set in dep (bit
 * q * (RW/32) + k: row q of the warp's, column lane + 32k, or with VEC 4 * lane + k). */
template <int RPW, bool VEC>
__device__ __forceinline__ void jf_dep_add(float *buf, uint32_t dep, float deposit)
{
    constexpr int RW = GPU_JF_RW;
    static_assert(RPW * (RW / 32) <= 32, "one bit per loaded cell in dep");
    if (!dep)
        return;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int q = 0; q < RPW; q++)
#pragma unroll
        for (int k = 0; k < RW / 32; k++)
            if ((dep >> (q * (RW / 32) + k)) & 1u) {
                const int col = VEC ? 4 * lane + k : lane + 32 * k;
                float *d = &buf[(warp * RPW + q) * RW + col];
                *d = SIM_FADD(*d, deposit);
            }
}

/* The K sweeps of a fused pass over the region in buf0 (its cells at grid (gx0, gy0) on), ping-
 * ponged with buf1 (the result in buf1 when K is odd, else buf0); a barrier after each. The
 * last sweep's residual goes into m here, except on the vector path with the terms, which takes
 * it in jf_store. Thread mapping and buffers: jf_kernel's. */
template <int K, int BND, bool TERMS, bool VEC>
__device__ __forceinline__ void jf_sweeps(const gpu_jac &p, float *buf0, float *buf1, int gx0,
                                          int gy0, const unsigned *res, float &m)
{
    constexpr int RW = GPU_JF_RW, RH = jf_rh(K), HX = jf_hx(K, VEC);
    constexpr int RPW = RH / (GPU_JF_THREADS / 32);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int gxl = gx0 + lane * 4;
    /* A block whose region lies inside a bounded grid needs no boundary checks (most of them). */
    const bool interior = BND == SIM_BOUNDARY_PERIODIC ||
                          (gx0 >= 0 && gy0 >= 0 && gx0 + RW <= p.w && gy0 + RH <= p.h);
    /* The residual's columns: on the vector path a lane's four are all in the tile and grid, or
     * none (one test a thread, not four a row). */
    const bool res_quad = VEC && lane * 4 >= HX && lane * 4 < RW - HX && gxl < p.w;
#pragma unroll 1
    for (int t = 0; t < K; t++) {
        const float *in = (t & 1) ? buf1 : buf0;
        float *out = (t & 1) ? buf0 : buf1;
        /* Sweep t only needs rows t+1 .. RH-2-t: the rest can no longer reach the written
         * tile. Their rows in `out` keep stale values that nothing valid reads. */
        const int lo = max(warp * RPW, t + 1), hi = min((warp + 1) * RPW, RH - 1 - t);
        if (lo < hi) {
            float4 n = reinterpret_cast<const float4 *>(in + (lo - 1) * RW)[lane];
            float4 c = reinterpret_cast<const float4 *>(in + lo * RW)[lane];
#pragma unroll 2
            for (int rr = lo; rr < hi; rr++) {
                float4 s = reinterpret_cast<const float4 *>(in + (rr + 1) * RW)[lane];
                float wv = __shfl_up_sync(FULL_MASK, c.w, 1);
                float ev = __shfl_down_sync(FULL_MASK, c.x, 1);
                const int gy = gy0 + rr;
                float4 o;
                if (interior) {
                    o.x = sim_jacobi(c.x, n.x, s.x, c.y, wv, p.a, p.one_minus_a);
                    o.y = sim_jacobi(c.y, n.y, s.y, c.z, c.x, p.a, p.one_minus_a);
                    o.z = sim_jacobi(c.z, n.z, s.z, c.w, c.y, p.a, p.one_minus_a);
                    o.w = sim_jacobi(c.w, n.w, s.w, ev, c.z, p.a, p.one_minus_a);
                } else {
                    o.x = jf_update<BND>(p, c.x, n.x, s.x, c.y, wv, gxl, gy);
                    o.y = jf_update<BND>(p, c.y, n.y, s.y, c.z, c.x, gxl + 1, gy);
                    o.z = jf_update<BND>(p, c.z, n.z, s.z, c.w, c.y, gxl + 2, gy);
                    o.w = jf_update<BND>(p, c.w, n.w, s.w, ev, c.z, gxl + 3, gy);
                }
                /* The last sweep's rows are K .. RH - K - 1 (lo and hi above). */
                if (VEC && !TERMS && res && t == K - 1 && res_quad && gy < p.h) {
                    gpu_res_update(m, o.x, c.x);
                    gpu_res_update(m, o.y, c.y);
                    gpu_res_update(m, o.z, c.z);
                    gpu_res_update(m, o.w, c.w);
                } else if (!VEC && res && t == K - 1 && rr >= K && rr < RH - K && gy < p.h) {
                    const int col = lane * 4;
                    if (col + 0 >= HX && col + 0 < RW - HX && gxl + 0 < p.w) gpu_res_update(m, o.x, c.x);
                    if (col + 1 >= HX && col + 1 < RW - HX && gxl + 1 < p.w) gpu_res_update(m, o.y, c.y);
                    if (col + 2 >= HX && col + 2 < RW - HX && gxl + 2 < p.w) gpu_res_update(m, o.z, c.z);
                    if (col + 3 >= HX && col + 3 < RW - HX && gxl + 3 < p.w) gpu_res_update(m, o.w, c.w);
                }
                reinterpret_cast<float4 *>(out + rr * RW)[lane] = o;
                n = c;
                c = s;
            }
        }
        __syncthreads();
    }
}

/* A lane's four cells of row gy from column gx (a vector path's group): times keep where dec,
 * then stored into dst and, with sd, the snapshot slot. Returns them as stored. */
__device__ __forceinline__ float4 jf_put4(const gpu_jac &p, float4 v, bool dec,
                                          float *__restrict__ dst, float *__restrict__ sd, int gy,
                                          int gx)
{
    if (dec) {
        v.x = SIM_FMUL(v.x, p.keep);
        v.y = SIM_FMUL(v.y, p.keep);
        v.z = SIM_FMUL(v.z, p.keep);
        v.w = SIM_FMUL(v.w, p.keep);
    }
    *reinterpret_cast<float4 *>(&dst[(size_t)gy * p.w + gx]) = v;
    if (sd)
        *reinterpret_cast<float4 *>(&sd[(size_t)gy * p.w + gx]) = v;
    return v;
}

/* The vector path's map of a thread to a quad (four columns, 4 quad .. 4 quad + 3 of the region)
 * and a row phase (rows K + phase, K + phase + 8, ...). Without the terms a warp takes a row's 32
 * quads (quad = lane, phase = warp). With the terms (WCOLS) a warp takes 8 quads of 4 phases:
 * quad (warp % 4) 8 + lane % 8, phase (warp / 4) 4 + lane / 8, so that the four lanes l, l ^ 8,
 * l ^ 16, l ^ 24 hold the same columns and the warp's column sums come together by shuffles
 * (jf_colpart_warp), with no barrier of the block. A quarter warp still reads 128 contiguous
 * bytes of a shared row (no bank conflict) and a warp stores four rows of 128 bytes. */
template <bool WCOLS>
__device__ __forceinline__ void jf_vec_map(int &quad, int &phase)
{
    static_assert(GPU_JF_THREADS == 256, "8 warps: 8 row phases");
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    quad = WCOLS ? (warp & 3) * 8 + (lane & 7) : lane;
    phase = WCOLS ? (warp >> 2) * 4 + (lane >> 3) : warp;
}

/* jf_store's vector path, with the decay (DEC) known: a thread's four cells of a row (its quad,
 * jf_vec_map<TERMS>) are all in the tile and grid, or none. TERMS: g is the index of the
 * thread's first cell of the row times the checksum's constant (mod 2^64, so a column left of
 * the grid does no harm): one multiplication a thread, then one 64-bit addition a row. That index is a multiple of 4 (its
 * 16-byte store needs it), so g is even, and cell j's g | 1 is g plus a constant (j G + 1 for
 * even j, j G for odd j) with no carry out of the low word's bit 0: one 64-bit addition, one
 * xor and one wide multiply-add a cell. */
template <int K, bool TERMS, bool DEC>
__device__ __forceinline__ void jf_store_vec(const gpu_jac &p, const float *fin,
                                             const float *prev, float *__restrict__ dst, int gx0,
                                             int gy0, const unsigned *res, float &m,
                                             gpu_terms &t, gpu_mags &mg, double (&colp)[4],
                                             float *__restrict__ sd)
{
    constexpr int RW = GPU_JF_RW, RH = jf_rh(K), HX = jf_hx(K, true);
    constexpr int ROWS = GPU_JF_THREADS / 32;
    static_assert(RW / 32 == 4, "four columns a lane");
    int quad, phase;
    jf_vec_map<TERMS>(quad, phase);
    const int lc = 4 * quad, gx = gx0 + lc;
    if (lc < HX || lc >= RW - HX || gx >= p.w)
        return;
    const int r0 = K + phase, r1 = min(RH - K, p.h - gy0); /* rows below r1 are in the grid */
    unsigned long long g =
        TERMS ? ((unsigned long long)(gy0 + r0) * (unsigned long long)p.w +
                 (unsigned long long)(long long)gx) * SIM_CHECKSUM_GOLDEN
              : 0;
    const unsigned long long dig =
        TERMS ? (unsigned long long)ROWS * (unsigned long long)p.w * SIM_CHECKSUM_GOLDEN : 0;
    for (int rr = r0; rr < r1; rr += ROWS, g += dig) {
        const int gy = gy0 + rr;
        float4 v = reinterpret_cast<const float4 *>(fin + rr * RW)[quad];
        if (TERMS && res) {
            const float4 o = reinterpret_cast<const float4 *>(prev + rr * RW)[quad];
            gpu_res_update(m, v.x, o.x);
            gpu_res_update(m, v.y, o.y);
            gpu_res_update(m, v.z, o.z);
            gpu_res_update(m, v.w, o.w);
        }
        v = jf_put4(p, v, DEC, dst, sd, gy, gx);
        if (TERMS) {
            const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const unsigned long long c =
                    g + (unsigned long long)j * SIM_CHECKSUM_GOLDEN + (unsigned long long)(~j & 1);
                gpu_cell_terms_g(t, (unsigned)(c >> 32), (unsigned)c, e[j]);
                colp[j] += (double)e[j];
            }
            gpu_mags_add2(mg, v.x, v.y);
            gpu_mags_add2(mg, v.z, v.w);
        }
    }
}

/* The written tile of a fused pass, from the last sweep's output fin (and its input prev, for
 * the residual on the vector path with the terms) to dst, with the decay; with TERMS each cell's
 * checksum term and value into t, its magnitude into mg, the value also into colp (the thread's
 * sum of that column), and the residual into m. Thread mapping: jf_kernel's (a warp a row, 4
 * columns a lane with VEC; the vector path with the terms: jf_vec_map<true>). */
template <int K, bool TERMS, bool VEC, bool ONE_DECAY = TERMS>
__device__ __forceinline__ void jf_store(const gpu_jac &p, const float *fin, const float *prev,
                                         float *__restrict__ dst, int gx0, int gy0,
                                         const unsigned *res, int decay, float &m, gpu_terms &t,
                                         gpu_mags &mg, double (&colp)[GPU_JF_RW / 32],
                                         float *__restrict__ sd = nullptr)
{
    /* ONE_DECAY (the vector path): the rows compiled once for each decay (jf_store_vec); else the
     * loop below takes the decay at run time. The one-tile pass without the terms keeps the
     * latter: two copies there cost registers (8 bytes of spills under ptxas). */
    static_assert(ONE_DECAY || !(VEC && TERMS), "the vector path's terms are jf_store_vec's");
    if constexpr (VEC && ONE_DECAY) {
        if (decay)
            jf_store_vec<K, TERMS, true>(p, fin, prev, dst, gx0, gy0, res, m, t, mg, colp, sd);
        else
            jf_store_vec<K, TERMS, false>(p, fin, prev, dst, gx0, gy0, res, m, t, mg, colp, sd);
        return;
    }
    constexpr int RW = GPU_JF_RW, RH = jf_rh(K), HX = jf_hx(K, VEC);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    /* TERMS: the lane's first cell index in the row times the checksum's constant (mod 2^64, so
     * a column left of the grid does no harm), stepped by additions from row to row and cell to
     * cell (sim_checksum_cell_scaled): one multiplication a thread. */
    const int lc = VEC ? 4 * lane : lane; /* the lane's first column; VEC: four in a row */
    constexpr int ROWS = GPU_JF_THREADS / 32;
    unsigned long long ig0 =
        TERMS ? ((unsigned long long)(gy0 + K + warp) * (unsigned long long)p.w +
                 (unsigned long long)(long long)(gx0 + lc)) * SIM_CHECKSUM_GOLDEN
              : 0;
    const unsigned long long dig =
        TERMS ? (unsigned long long)ROWS * (unsigned long long)p.w * SIM_CHECKSUM_GOLDEN : 0;
    for (int rr = K + warp; rr < RH - K; rr += ROWS, ig0 += dig) {
        int gy = gy0 + rr;
        if (gy >= p.h)
            break;
        if constexpr (VEC) { /* without the terms */
            const int gx = gx0 + lc; /* the four cells are all in the tile and grid, or none */
            if (lc < HX || lc >= RW - HX || gx >= p.w)
                continue; /* to the next row */
            jf_put4(p, reinterpret_cast<const float4 *>(fin + rr * RW)[lane], decay, dst, sd, gy,
                    gx);
        } else {
#pragma unroll
            for (int k = 0; k < RW / 32; k++) {
                int col = lane + 32 * k, gx = gx0 + col;
                if (col < K || col >= RW - K || gx >= p.w)
                    continue;
                float v = fin[rr * RW + col];
                if (decay)
                    v = SIM_FMUL(v, p.keep);
                dst[(size_t)gy * p.w + gx] = v;
                if (sd)
                    sd[(size_t)gy * p.w + gx] = v;
                if (TERMS) {
                    gpu_cell_terms(t, ig0 + 32ull * k * SIM_CHECKSUM_GOLDEN, v);
                    gpu_mags_add(mg, v);
                    colp[k] += (double)v;
                }
            }
        }
    }
}

/* The column sums' share of a stored tile on the scalar path (gpu_stats_colsum's d_part; the
 * vector path's is jf_colpart_warp): each thread's partial sums of its columns lane + 32 j
 * (colp, from jf_store) go through scr (ROWS x RW doubles of a shared buffer the tile reads no
 * more), then one thread a written column adds the warps' partials and adds that sum into the
 * column's word of part (one atomic addition, no reply awaited). Any order of these additions
 * gives the column sums where they are taken from part (gpu_colsum_exact). Every thread of the
 * block calls it after jf_store. */
template <int K>
__device__ __forceinline__ void jf_colpart(const gpu_jac &p, const double (&colp)[GPU_JF_RW / 32],
                                           double *scr, int gx0, double *part)
{
    constexpr int RW = GPU_JF_RW, HX = jf_hx(K, false), ROWS = GPU_JF_THREADS / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads(); /* the tile's reads of the buffers are done */
#pragma unroll
    for (int j = 0; j < RW / 32; j++)
        scr[warp * RW + lane + 32 * j] = colp[j];
    __syncthreads();
    for (int c = threadIdx.x; c < RW; c += GPU_JF_THREADS) {
        const int gx = gx0 + c;
        if (c < HX || c >= RW - HX || gx >= p.w)
            continue;
        double sum = 0.0;
#pragma unroll
        for (int r = 0; r < ROWS; r++)
            sum += scr[r * RW + c];
        atomicAdd(&part[gx], sum);
    }
}

/* jf_colpart's work on the vector path with the terms (jf_vec_map<true>): the four lanes of a
 * warp that hold the same quad add their partial sums by shuffles, each keeping one of the four
 * columns (column 2 b4 + b3 of the quad, b4 and b3 the lane's bits 4 and 3: two exchanges of
 * halves), and every lane of a written quad adds its column's sum into part: 32 consecutive
 * words a warp, two additions a column and tile (warps w and w + 4), no barrier. Every lane of
 * the warp calls it after jf_store, those outside the tile with colp zero. */
template <int K>
__device__ __forceinline__ void jf_colpart_warp(const gpu_jac &p, const double (&colp)[4],
                                                int gx0, double *part)
{
    constexpr int RW = GPU_JF_RW, HX = jf_hx(K, true);
    const unsigned full = 0xffffffffu;
    const bool b4 = threadIdx.x & 16, b3 = threadIdx.x & 8;
    double k0 = b4 ? colp[2] : colp[0], k1 = b4 ? colp[3] : colp[1];
    k0 += __shfl_xor_sync(full, b4 ? colp[0] : colp[2], 16);
    k1 += __shfl_xor_sync(full, b4 ? colp[1] : colp[3], 16);
    double k = b3 ? k1 : k0;
    k += __shfl_xor_sync(full, b3 ? k0 : k1, 8);
    int quad, phase;
    jf_vec_map<true>(quad, phase);
    const int lc = 4 * quad, gx = gx0 + lc;
    if (lc >= HX && lc < RW - HX && gx < p.w)
        atomicAdd(&part[gx + (b4 ? 2 : 0) + (b3 ? 1 : 0)], k);
}

/* The end of a fused pass's block: the residual m (into *res, where res) and, with TERMS, the
 * checksum terms and max key of t and the magnitudes mg (into terms; the magnitudes where mags),
 * each reduced over the warp and then over the block through shared memory (one barrier), and
 * committed by thread 0: one atomic a word and block. A warp at a time, the default scenario's
 * 95 blocks ended with 760 atomicMax into the one residual word, performed one after the other
 * at its address; once a block, its steps with statistics ran 1.1% faster (H200; the residual
 * as a whole cost 0.67 us of the 19 us step, measured by leaving it out). m is never negative
 * or NaN, so its bits order as the values. Every thread of the block calls it. */
template <bool TERMS>
__device__ __forceinline__ void jf_commit(float m, unsigned *res, const gpu_terms &t, gpu_mags mg,
                                          gpu_ctl *terms, bool mags)
{
    constexpr int NW = GPU_JF_THREADS / 32;
    __shared__ unsigned s_u[4][NW];
    __shared__ unsigned long long s_cs[NW];
    const unsigned full = 0xffffffffu;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned rb = __reduce_max_sync(full, __float_as_uint(m)), mk = 0;
    unsigned long long cs = 0;
    if (TERMS) {
        cs = gpu_warp_sum64(t.cs);
        mk = __reduce_max_sync(full, gpu_terms_key(t));
        mg.hi2 = __reduce_max_sync(full, mg.hi2);
        mg.lo2 = __reduce_min_sync(full, mg.lo2);
    }
    if (lane == 0) {
        s_u[0][warp] = rb;
        if (TERMS) {
            s_cs[warp] = cs;
            s_u[1][warp] = mk;
            s_u[2][warp] = mg.hi2;
            s_u[3][warp] = mg.lo2;
        }
    }
    __syncthreads();
    if (threadIdx.x != 0)
        return;
#pragma unroll
    for (int i = 1; i < NW; i++) {
        rb = max(rb, s_u[0][i]);
        if (TERMS) {
            cs += s_cs[i];
            mk = max(mk, s_u[1][i]);
            mg.hi2 = max(mg.hi2, s_u[2][i]);
            mg.lo2 = min(mg.lo2, s_u[3][i]);
        }
    }
    if (res && rb)
        atomicMax(res, rb);
    if (TERMS) {
        if (cs)
            atomicAdd(&terms->checksum, cs);
        if (mk)
            atomicMax(&terms->max_key, mk);
        if (mags)
            gpu_put_mags(mg, terms);
    }
}

/* Thread mapping: 8 warps; lane l owns columns 4l..4l+3 of the RW = 128 wide region (one float4,
 * conflict-free), warp w owns rows RPW*w .. RPW*w+RPW-1 of the RH high region. Shared memory: two
 * RH x RW float buffers (32 or 64 KB, dynamic), ping-ponged between sweeps. The block writes the inner
 * (RW-2K) x (RH-2K) cells; after sweep t the cells within t of the region's edge are stale,
 * which never reaches the inner part after K sweeps.
 * DEP: the agents' deposit, folded in: every cell whose bit is set in the occupancy bitmap occ is
 * loaded as cell + deposit (SIM_FADD, as the CPU adds it before the sweeps), so the move kernel
 * need not read and write the field. Without it (Laplace, a model's fields) the instance has no
 * bitmap loads or branches between the copies: they cost 8-20% when they were tested at run
 * time.
 * TERMS (with DEP only: the step's one pass): each written cell's checksum term and the max go
 * into *terms (gpu_jacobi_run_terms), hashed as the cell is stored.
 * VEC (periodic grids whose width is a multiple of 4 and at least the region's, jf_launch_k):
 * the region's columns start on a multiple of 4 (halo jf_hx), so a lane loads and stores its
 * four columns of a row with one 16-byte copy and takes their four deposit bits from one
 * occupancy word: the scalar version spent most of the pass issuing per-cell address
 * arithmetic (ncu: 77% of issue slots busy, the ALU pipe the busiest, memory at 65%). */
template <int K, int BND, bool DEP, bool TERMS, bool VEC>
__global__ void __launch_bounds__(GPU_JF_THREADS, jf_minb(K, VEC))
jf_kernel(gpu_jac p, const float *__restrict__ src, float *__restrict__ dst, unsigned *res,
          int decay, int cheap_wrap, const uint32_t *__restrict__ occ, float deposit,
          gpu_ctl *terms, gpu_snap sn, double *colpart)
{
    gpu_pdl_wait(); /* the field and occupancy of the kernels before (gpu_pdl.cuh) */
    gpu_pdl_release();
    if (p.halt && *p.halt)
        return; /* the whole grid */
    constexpr int RW = GPU_JF_RW, RH = jf_rh(K), HX = jf_hx(K, VEC), TX = RW - 2 * HX,
                  TY = RH - 2 * K;
    constexpr int RPW = RH / (GPU_JF_THREADS / 32);
    static_assert(RPW * (RW / 32) <= 32, "one bit per loaded cell in dep");
    static_assert(!VEC || BND == SIM_BOUNDARY_PERIODIC, "the vector path wraps rows whole");
    extern __shared__ float4 jf_smem[];
    float *buf0 = reinterpret_cast<float *>(jf_smem);
    float *buf1 = buf0 + RH * RW;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int gx0 = (int)blockIdx.x * TX - HX, gy0 = (int)blockIdx.y * TY - K;

    /* The region goes global -> shared by asynchronous copies (cp.async): every copy of the
     * block is in flight at once and no registers hold the values on the way. dep: bit
     * q * (RW/32) + k for the cells this thread loads that hold an agent (row q of the warp's,
     * column lane + 32k, or with VEC 4 * lane + k). */
    uint32_t dep = 0;
    if constexpr (VEC) {
        uint32_t ow[RPW], sh;
        jf_issue_vec<RPW, DEP>(p, src, occ, buf0, gx0, gy0, ow, sh);
        if (DEP)
            dep = jf_dep_vec<RPW>(ow, sh);
    } else {
#pragma unroll
        for (int q = 0; q < RPW; q++) {
            const int rr = warp * RPW + q;
            int gy = gy0 + rr;
            bool row_ok = true;
            if (BND == SIM_BOUNDARY_PERIODIC)
                gy = cheap_wrap ? (gy < 0 ? gy + p.h : (gy >= p.h ? gy - p.h : gy))
                                : jwrap(gy, p.h);
            else
                row_ok = gy >= 0 && gy < p.h;
#pragma unroll
            for (int k = 0; k < RW / 32; k++) {
                const int col = lane + 32 * k;
                int gx = gx0 + col;
                float *d = &buf0[rr * RW + col];
                bool inside = true;
                if (BND == SIM_BOUNDARY_PERIODIC)
                    gx = cheap_wrap ? (gx < 0 ? gx + p.w : (gx >= p.w ? gx - p.w : gx))
                                    : jwrap(gx, p.w);
                else
                    inside = row_ok && gx >= 0 && gx < p.w;
                if (inside) {
                    const size_t gi = (size_t)gy * p.w + gx;
                    __pipeline_memcpy_async(d, &src[gi], sizeof(float));
                    if (DEP && ((__ldg(&occ[gi >> 5]) >> (gi & 31)) & 1u))
                        dep |= 1u << (q * (RW / 32) + k);
                } else {
                    *d = 0.0f;
                }
            }
        }
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    /* The thread's own copies are complete and visible to it: add the deposits to them. */
    if (DEP)
        jf_dep_add<RPW, VEC>(buf0, dep, deposit);
    __syncthreads();

    float m = 0.0f;
    jf_sweeps<K, BND, TERMS, VEC>(p, buf0, buf1, gx0, gy0, res, m);

    const float *fin = (K & 1) ? buf1 : buf0;
    /* With the terms on the vector path the last sweep's residual is taken here, where a whole
     * group of four is in the tile or not (one check instead of four), from the last sweep's
     * input (the other buffer, valid on the tile) and its output before the decay. */
    const float *prev = (K & 1) ? buf0 : buf1;
    gpu_terms t = gpu_terms_none();
    float *sd = nullptr; /* the snapshot slot (gpu_snap) */
    if (DEP && sn.base)
        sd = sn.base + (size_t)(sn.pos[1] % sn.cap) * gpu_defer_slot_floats((int64_t)p.w * p.h);
    double colp[RW / 32] = {};
    gpu_mags mg = gpu_mags_none();
    jf_store<K, TERMS, VEC>(p, fin, prev, dst, gx0, gy0, res, decay, m, t, mg, colp, sd);
    if (TERMS && colpart) {
        if constexpr (VEC)
            jf_colpart_warp<K>(p, colp, gx0, colpart);
        else
            jf_colpart<K>(p, colp, reinterpret_cast<double *>(buf0), gx0, colpart);
    }
    if (TERMS || res)
        jf_commit<TERMS>(m, res, t, mg, terms, colpart != nullptr);
}

/* ------------------------------------------------------------------------------------------ */
/* K sweeps per pass, persistent blocks                                                        */

/* The vector pass with the deposit (jf_kernel's VEC and DEP: the step's pass on the large
 * periodic worlds) with its loads overlapping the work of the tile before: a grid of at most
 * the blocks that fit at once (jp_grid), block b taking tiles b, b + grid, b + 2 grid, ... (tile
 * t is column t % ntx, row t / ntx of the tiles). While a block sweeps and stores one tile, the
 * copies of its next tile's region and that region's occupancy words are in flight, the copies
 * into a second buffer. The one-tile form loads, sweeps and stores in turn, and waits for each
 * occupancy word before it asks for the next; measured on the large scenario (H200, `horizon
 * run`): +2.4%. TERMS: with the statistics' terms (jf_kernel's), summed over the block's tiles
 * and committed once; each tile also adds its share of the column sums (jf_colpart). Without the
 * deposit (the model engine's fields) it was no faster (gpu/BENCH.md, round 11), so those keep
 * jf_kernel.
 * Arithmetic, order and results: jf_kernel's. Thread mapping: jf_kernel's. Shared memory: three
 * RH x RW float buffers (48 KB at K = 2): the current region, the next one, and the sweeps'
 * other buffer. */
template <int K, bool TERMS>
__global__ void __launch_bounds__(GPU_JF_THREADS, GPU_JP_MINB)
jp_kernel(gpu_jac p, const float *__restrict__ src, float *__restrict__ dst, unsigned *res,
          int decay, const uint32_t *__restrict__ occ, float deposit, int ntx, int ntiles,
          gpu_ctl *terms, double *colpart)
{
    gpu_pdl_wait(); /* the field and occupancy of the kernels before (gpu_pdl.cuh) */
    gpu_pdl_release();
    if (p.halt && *p.halt)
        return; /* the whole grid */
    constexpr int RW = GPU_JF_RW, RH = jf_rh(K), HX = jf_hx(K, true), TX = RW - 2 * HX,
                  TY = RH - 2 * K;
    constexpr int RPW = RH / (GPU_JF_THREADS / 32);
    extern __shared__ float4 jf_smem[];
    float *const region = reinterpret_cast<float *>(jf_smem); /* two regions, then the other */
    float *const other = region + 2 * RH * RW;

    int t = (int)blockIdx.x; /* < ntiles: the grid is never larger */
    uint32_t ow[RPW], sh;
    jf_issue_vec<RPW, true>(p, src, occ, region, (t % ntx) * TX - HX, (t / ntx) * TY - K, ow, sh);
    __pipeline_commit();
    float m = 0.0f;
    gpu_terms tm = gpu_terms_none(); /* TERMS: over all the block's tiles */
    gpu_mags mg = gpu_mags_none();
    for (int i = 0; t < ntiles; t += (int)gridDim.x, i ^= 1) {
        float *const cur = region + i * RH * RW;
        const int tn = t + (int)gridDim.x;
        uint32_t own[RPW], shn = 0;
        /* The next region goes into the buffer the previous tile used (free since the barrier
         * that ended its iteration). */
        if (tn < ntiles)
            jf_issue_vec<RPW, true>(p, src, occ, region + (i ^ 1) * RH * RW,
                                    (tn % ntx) * TX - HX, (tn / ntx) * TY - K, own, shn);
        __pipeline_commit();
        __pipeline_wait_prior(1); /* this tile's copies, not the next one's */
        jf_dep_add<RPW, true>(cur, jf_dep_vec<RPW>(ow, sh), deposit);
        __syncthreads();
        const int gx0 = (t % ntx) * TX - HX, gy0 = (t / ntx) * TY - K;
        jf_sweeps<K, SIM_BOUNDARY_PERIODIC, TERMS, true>(p, cur, other, gx0, gy0, res, m);
        double colp[RW / 32] = {};
        jf_store<K, TERMS, true, true>(p, (K & 1) ? other : cur, (K & 1) ? cur : other, dst, gx0,
                                       gy0, res, decay, m, tm, mg, colp);
        if (TERMS && colpart)
            jf_colpart_warp<K>(p, colp, gx0, colpart);
#pragma unroll
        for (int q = 0; q < RPW; q++)
            ow[q] = own[q];
        sh = shn;
        __syncthreads(); /* cur and other are read no more */
    }
    if (TERMS || res)
        jf_commit<TERMS>(m, res, tm, mg, terms, colpart != nullptr);
}

/* Multiplies every cell by keep (decay without sweeps). */
__global__ void decay_kernel(float *f, size_t n, float keep, const unsigned *halt)
{
    gpu_pdl_wait(); /* the field of the kernels before (gpu_pdl.cuh) */
    gpu_pdl_release();
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && !(halt && *halt))
        f[i] = SIM_FMUL(f[i], keep);
}

/* ------------------------------------------------------------------------------------------ */
/* Dispatch                                                                                    */

static size_t jf_smem_bytes(int K)
{
    return 2 * (size_t)GPU_JF_RW * (size_t)jf_rh(K) * sizeof(float);
}

template <int K, int BND, bool DEP, bool TERMS, bool VEC>
static int jf_init_kbd(sim_err *err)
{
    GPU_CHECK(err, cudaFuncSetAttribute(jf_kernel<K, BND, DEP, TERMS, VEC>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)jf_smem_bytes(K)));
    /* The largest shared-memory carve-out, so that several blocks fit on a multiprocessor. */
    GPU_CHECK(err, cudaFuncSetAttribute(jf_kernel<K, BND, DEP, TERMS, VEC>,
                                        cudaFuncAttributePreferredSharedMemoryCarveout,
                                        cudaSharedmemCarveoutMaxShared));
    return SIM_OK;
}

template <int K, int BND, bool VEC>
static int jf_init_kbv(sim_err *err)
{
    GPU_TRY((jf_init_kbd<K, BND, false, false, VEC>(err)));
    GPU_TRY((jf_init_kbd<K, BND, true, false, VEC>(err)));
    return jf_init_kbd<K, BND, true, true, VEC>(err);
}

template <int K, int BND>
static int jf_init_kb(sim_err *err)
{
    if constexpr (BND == SIM_BOUNDARY_PERIODIC)
        GPU_TRY((jf_init_kbv<K, BND, true>(err)));
    return jf_init_kbv<K, BND, false>(err);
}

template <int K>
static int jf_init_k(sim_err *err)
{
    GPU_TRY(jf_init_kb<K, SIM_BOUNDARY_PERIODIC>(err));
    GPU_TRY(jf_init_kb<K, SIM_BOUNDARY_WALL>(err));
    return jf_init_kb<K, SIM_BOUNDARY_FIXED>(err);
}

/* The persistent pass (jp_kernel, K = 2): its shared memory, and on each device the blocks of
 * it that fit at once (0: not set up there, or turned off) and whether it is forced (see
 * jp_init), set once per device by gpu_jacobi_init as the kernels' attributes are. */
static size_t jp_smem_bytes(void)
{
    return 3 * (size_t)GPU_JF_RW * (size_t)jf_rh(2) * sizeof(float);
}
static std::atomic<int> jp_slots_on[64], jp_forced_on[64];

/* The persistent pass's slots on device dev: the blocks of it that fit at once.
 * HORIZON_JF_PERSIST, a measuring and testing aid: unset or 1, the pass is persistent wherever
 * jp_grid finds it worth it; 0, never; N >= 2, always where it applies, with at most N blocks
 * (so that a small world's blocks take several tiles each). */
static int jp_init(int dev, sim_err *err)
{
    const char *env = getenv("HORIZON_JF_PERSIST");
    long forced = 1;
    if (env && *env) {
        char *end = NULL;
        forced = strtol(env, &end, 10);
        if (*end || forced < 0 || forced > INT_MAX)
            return sim_err_set(err, SIM_EINVAL, "HORIZON_JF_PERSIST=%s: allowed 0, 1, or a "
                               "number of blocks of at least 2", env);
    }
    int sms = 0, per_sm = 0;
    GPU_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    for (auto *k : {jp_kernel<2, false>, jp_kernel<2, true>}) {
        GPU_CHECK(err, cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            (int)jp_smem_bytes()));
        GPU_CHECK(err, cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout,
                                            cudaSharedmemCarveoutMaxShared));
    }
    /* The instance with the terms has the same launch bounds: the same blocks fit. */
    GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, jp_kernel<2, false>,
                                                                 GPU_JF_THREADS, jp_smem_bytes()));
    int slots = per_sm * sms;
    if (forced != 1 && forced < slots)
        slots = (int)forced;
    if (dev < 64) {
        jp_slots_on[dev].store(slots);
        jp_forced_on[dev].store(forced >= 2);
    }
    return SIM_OK;
}

/* The persistent pass's grid for ntiles tiles on the current device: as few blocks as give
 * each the same number of tiles as the slots would (no block waits for a last, lone tile),
 * or 0 (use jf_kernel) where it is not set up, or, unless forced, where a block would get
 * fewer than GPU_JP_TILES_MIN tiles (nothing to overlap). */
static int jp_grid(int ntiles)
{
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64)
        return 0;
    const int slots = jp_slots_on[dev].load();
    if (slots <= 0)
        return 0;
    const int per = (ntiles + slots - 1) / slots;
    if (per < GPU_JP_TILES_MIN && !jp_forced_on[dev].load())
        return 0;
    return (ntiles + per - 1) / per;
}

int gpu_jacobi_init(sim_err *err)
{
    /* Kernel attributes belong to the device's context, not to an instance: set them once per
     * device (42 driver calls that a sweep would otherwise repeat for every run). Two threads
     * racing here both set the same values, which is harmless. */
    static std::atomic<unsigned long long> done_on(0);
    int dev = 0;
    GPU_CHECK(err, cudaGetDevice(&dev));
    unsigned long long bit = dev < 64 ? 1ull << dev : 0;
    if (bit && (done_on.load() & bit))
        return SIM_OK;
    GPU_TRY(jf_init_k<2>(err));
    GPU_TRY(jf_init_k<3>(err));
    GPU_TRY(jf_init_k<4>(err));
    GPU_TRY(jf_init_k<5>(err));
    GPU_TRY(jf_init_k<6>(err));
    GPU_TRY(jf_init_k<7>(err));
    GPU_TRY(jf_init_k<8>(err));
    GPU_TRY(jp_init(dev, err));
    done_on.fetch_or(bit);
    return SIM_OK;
}

static int clamp_fuse(int fuse_max)
{
    if (fuse_max <= 0)
        return GPU_JF_KMAX;
    return fuse_max > GPU_JF_KMAX ? GPU_JF_KMAX : fuse_max;
}

int gpu_jacobi_passes(int sweeps, int fuse_max)
{
    int f = clamp_fuse(fuse_max);
    return (sweeps + f - 1) / f;
}

template <int BND>
static void js_launch(const gpu_jac *p, const float *src, float *dst, unsigned *res, int decay,
                      cudaStream_t s)
{
    /* 16-row strips measured faster than 32-row ones at 16384^2 on an H200 (89% vs 87-88% of
     * the copy bandwidth); js_rows lets the bench compare. */
    const int rows = p->js_rows > 0 ? p->js_rows : GPU_JS_ROWS;
    dim3 block(32, GPU_JS_WARPS);
    unsigned gy = (unsigned)((p->h + GPU_JS_WARPS * rows - 1) / (GPU_JS_WARPS * rows));
    const int batch = p->js_batch > 0 ? p->js_batch : GPU_JS_BATCH;
    if (p->w % 4 == 0) {
        dim3 grid((unsigned)((p->w / 4 + 31) / 32), gy);
        if (batch >= 8)
            gpu_launch(p->pdl, js_kernel<BND, 4, 8>, grid, block, 0, s, *p, src, dst, res, decay,
                       rows);
        else
            gpu_launch(p->pdl, js_kernel<BND, 4, 4>, grid, block, 0, s, *p, src, dst, res, decay,
                       rows);
    } else {
        dim3 grid((unsigned)((p->w + 31) / 32), gy);
        gpu_launch(p->pdl, js_kernel<BND, 1, 4>, grid, block, 0, s, *p, src, dst, res, decay,
                   rows);
    }
}

/* Fused passes only: the deposit (occ, deposit) is folded into the region load; with terms,
 * the statistics' terms of the written field are added into it (jf_kernel's TERMS). */
struct jf_dep {
    const uint32_t *occ;
    float deposit;
    gpu_ctl *terms;
    gpu_snap snap;   /* base NULL: none */
    double *colpart; /* with terms: gpu_stats_colsum's d_part (read only with them) */
};

template <int K, int BND, bool VEC>
static void jf_launch_kv(const gpu_jac *p, const float *src, float *dst, unsigned *res,
                         int decay, int cheap, jf_dep dep, cudaStream_t s)
{
    const int TX = GPU_JF_RW - 2 * jf_hx(K, VEC), TY = jf_rh(K) - 2 * K;
    dim3 grid((unsigned)((p->w + TX - 1) / TX), (unsigned)((p->h + TY - 1) / TY));
    if constexpr (VEC && K == 2) {
        const int ntiles = (int)(grid.x * grid.y);
        const int blocks = dep.occ && !dep.snap.base ? jp_grid(ntiles) : 0;
        if (blocks > 0) {
            gpu_launch(p->pdl, dep.terms ? jp_kernel<K, true> : jp_kernel<K, false>, blocks,
                       GPU_JF_THREADS, jp_smem_bytes(), s, *p, src, dst, res, decay, dep.occ,
                       dep.deposit, (int)grid.x, ntiles, dep.terms, dep.colpart);
            return;
        }
    }
    /* The instances without the deposit or the terms do not read those arguments. */
    auto *kernel = dep.occ && dep.terms ? jf_kernel<K, BND, true, true, VEC>
                   : dep.occ            ? jf_kernel<K, BND, true, false, VEC>
                                        : jf_kernel<K, BND, false, false, VEC>;
    gpu_launch(p->pdl, kernel, grid, GPU_JF_THREADS, jf_smem_bytes(K), s, *p, src, dst, res,
               decay, cheap, dep.occ, dep.deposit, dep.terms, dep.snap, dep.colpart);
}

/* The vector instance (jf_kernel's VEC) where it applies: a periodic grid at least a region
 * wide and high (its wrap is one add or subtract) whose width is a multiple of 4 (its rows
 * start on 16-byte boundaries). */
template <int K, int BND>
static void jf_launch_k(const gpu_jac *p, const float *src, float *dst, unsigned *res, int decay,
                        jf_dep dep, cudaStream_t s)
{
    int cheap = p->w >= GPU_JF_RW && p->h >= jf_rh(K);
    if constexpr (BND == SIM_BOUNDARY_PERIODIC) {
        if (cheap && p->w % 4 == 0) {
            jf_launch_kv<K, BND, true>(p, src, dst, res, decay, cheap, dep, s);
            return;
        }
    }
    jf_launch_kv<K, BND, false>(p, src, dst, res, decay, cheap, dep, s);
}

template <int BND>
static void jf_launch(int k, const gpu_jac *p, const float *src, float *dst, unsigned *res,
                      int decay, jf_dep dep, cudaStream_t s)
{
    switch (k) {
    case 2: jf_launch_k<2, BND>(p, src, dst, res, decay, dep, s); break;
    case 3: jf_launch_k<3, BND>(p, src, dst, res, decay, dep, s); break;
    case 4: jf_launch_k<4, BND>(p, src, dst, res, decay, dep, s); break;
    case 5: jf_launch_k<5, BND>(p, src, dst, res, decay, dep, s); break;
    case 6: jf_launch_k<6, BND>(p, src, dst, res, decay, dep, s); break;
    case 7: jf_launch_k<7, BND>(p, src, dst, res, decay, dep, s); break;
    default: jf_launch_k<8, BND>(p, src, dst, res, decay, dep, s); break;
    }
}

static void pass_launch(const gpu_jac *p, int k, const float *src, float *dst, unsigned *res,
                        int decay, jf_dep dep, cudaStream_t s)
{
    switch (p->boundary) {
    case SIM_BOUNDARY_PERIODIC:
        if (k == 1)
            js_launch<SIM_BOUNDARY_PERIODIC>(p, src, dst, res, decay, s);
        else
            jf_launch<SIM_BOUNDARY_PERIODIC>(k, p, src, dst, res, decay, dep, s);
        break;
    case SIM_BOUNDARY_WALL:
        if (k == 1)
            js_launch<SIM_BOUNDARY_WALL>(p, src, dst, res, decay, s);
        else
            jf_launch<SIM_BOUNDARY_WALL>(k, p, src, dst, res, decay, dep, s);
        break;
    default:
        if (k == 1)
            js_launch<SIM_BOUNDARY_FIXED>(p, src, dst, res, decay, s);
        else
            jf_launch<SIM_BOUNDARY_FIXED>(k, p, src, dst, res, decay, dep, s);
        break;
    }
}

int gpu_jacobi_first_pass(int sweeps, int fuse_max)
{
    if (sweeps <= 0)
        return 0;
    const int passes = gpu_jacobi_passes(sweeps, fuse_max);
    return (sweeps + passes - 1) / passes;
}

int gpu_jacobi_run(const gpu_jac *p, float **d_cur, float **d_other, int sweeps, int fuse_max,
                   int decay, unsigned *d_residual, cudaStream_t s, sim_err *err)
{
    return gpu_jacobi_run_dep(p, d_cur, d_other, sweeps, fuse_max, decay, NULL, 0.0f, d_residual,
                              s, err);
}

int gpu_jacobi_run_dep(const gpu_jac *p, float **d_cur, float **d_other, int sweeps, int fuse_max,
                       int decay, const uint32_t *d_occ, float deposit, unsigned *d_residual,
                       cudaStream_t s, sim_err *err)
{
    return gpu_jacobi_run_terms(p, d_cur, d_other, sweeps, fuse_max, decay, d_occ, deposit,
                                d_residual, NULL, NULL, NULL, s, err);
}

int gpu_jacobi_run_terms(const gpu_jac *p, float **d_cur, float **d_other, int sweeps,
                         int fuse_max, int decay, const uint32_t *d_occ, float deposit,
                         unsigned *d_residual, gpu_ctl *d_terms, const gpu_snap *snap,
                         double *d_colpart, cudaStream_t s, sim_err *err)
{
    if (d_occ && gpu_jacobi_first_pass(sweeps, fuse_max) < 2)
        return sim_err_set(err, SIM_EINVAL, "jacobi: a deposit can only be folded into a fused "
                           "first pass (%d sweeps, fuse_max %d)", sweeps, fuse_max);
    if ((d_terms || snap) && (!d_occ || gpu_jacobi_passes(sweeps, fuse_max) != 1))
        return sim_err_set(err, SIM_EINVAL, "jacobi: the statistics' terms can only be folded "
                           "into the one pass of a deposit (%d sweeps, fuse_max %d)", sweeps,
                           fuse_max);
    if (d_terms && !d_colpart) /* else the column sums would be taken from a row never added to */
        return sim_err_set(err, SIM_EINVAL, "jacobi: the statistics' terms need the column sums' "
                           "row (d_colpart)");
    if (sweeps <= 0) {
        if (decay) {
            size_t n = (size_t)p->w * p->h;
            gpu_launch(p->pdl, decay_kernel,
                       (unsigned)((n + GPU_EW_THREADS - 1) / GPU_EW_THREADS), GPU_EW_THREADS, 0,
                       s, *d_cur, n, p->keep, p->halt);
            GPU_CHECK_LAUNCH(err, s);
        }
        return SIM_OK;
    }
    const int f = clamp_fuse(fuse_max);
    /* Spread the sweeps evenly over the passes (10 = 5 + 5 rather than 8 + 2): the same number
     * of passes with less halo work in the largest one. */
    const int passes = (sweeps + f - 1) / f;
    int left = sweeps;
    for (int i = 0; i < passes; i++) {
        int k = (left + (passes - i) - 1) / (passes - i);
        int last = i == passes - 1;
        jf_dep dep = {i == 0 ? d_occ : NULL, deposit, d_terms, {NULL, NULL, 1}, d_colpart};
        if (snap)
            dep.snap = *snap;
        pass_launch(p, k, *d_cur, *d_other, last ? d_residual : NULL, last && decay, dep, s);
        GPU_CHECK_LAUNCH(err, s);
        float *t = *d_cur;
        *d_cur = *d_other;
        *d_other = t;
        left -= k;
    }
    return SIM_OK;
}
