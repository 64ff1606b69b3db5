/* gpu_disk_sums.cuh - the 9 candidate sums of one agent's disk from prefix rows, walked row by
 * row (disk_sums9, and disk_sums9_c for a radius known at compile time): shared by the fast
 * path's tile-sum kernel (gpu_horizon_block.cuh, hz_sparse) and the model engine's sense kernel
 * (gpu_model_sense.cu, md_sparse), which differ only in the prefix entries' type and the
 * accumulators. Device code, included by .cu files. */
#ifndef GPU_DISK_SUMS_CUH
#define GPU_DISK_SUMS_CUH

#include <stdint.h>

extern "C" {
#include "sim_rules.h"
}

/* s[i], s[i + 1], s[i + 2] += v0, v1, v2: one candidate row's three candidates. */
template <class S>
__device__ __forceinline__ void add3(typename S::acc_t (&s)[9], int i, typename S::span_t v0,
                                     typename S::span_t v1, typename S::span_t v2)
{
    S::add(s[i], v0);
    S::add(s[i + 1], v1);
    S::add(s[i + 2], v2);
}

/* The 9 candidate sums of the agent at (x, y) of the prefix rows P (g.PW entries a row; g.r the
 * radius), in slot order (slot = (dy+1)*3 + dx+1), walked over the rows from r + 1 above it (g
 * is read here, where the callers read it before). Row k (1 .. 2r + 3) serves the candidate rows
 * cy = -1, 0, 1 with disk rows k - r - 1, k - r - 2, k - r - 3; the three candidates of a candidate row share a half-width, and equal half-widths of
 * neighbouring candidate rows reuse the spans. The half-widths of a row are the previous row's
 * shifted by one, so one table read per row: hwp[d] = half-width of disk row d - r - 2, -1 outside
 * the disk. S (the fast path's hz_sparse, the model engine's md_sparse) gives the prefix entries'
 * type (row_t), a span's (span_t) and the accumulators' (acc_t), spans3 (the spans of one
 * half-width centred one column left of, at and right of the row's column), add and value. */
template <class S, class G>
__device__ __forceinline__ void disk_sums9(const typename S::row_t *P, const G &g, const int *hwp,
                                           int x, int y, int64_t out[9])
{
    typename S::acc_t s[9];
#pragma unroll
    for (int i = 0; i < 9; i++)
        s[i] = 0;
    const typename S::row_t *row = P + (y - g.r - 1) * g.PW + x;
    const int n = 2 * g.r + 3;
    int hb = hwp[1], hc = hwp[0]; /* -1: rows above the first candidate row's disk */
#pragma unroll 2
    for (int k = 1; k <= n; k++, row += g.PW) {
        const int ha = hwp[k + 1];
        typename S::span_t v0 = 0, v1 = 0, v2 = 0;
        int hp = -1;
        if (ha >= 0) {
            S::spans3(row, ha, v0, v1, v2);
            hp = ha;
            add3<S>(s, 0, v0, v1, v2);
        }
        if (hb >= 0) {
            if (hb != hp) {
                S::spans3(row, hb, v0, v1, v2);
                hp = hb;
            }
            add3<S>(s, 3, v0, v1, v2);
        }
        if (hc >= 0) {
            if (hc != hp)
                S::spans3(row, hc, v0, v1, v2);
            add3<S>(s, 6, v0, v1, v2);
        }
        hc = hb;
        hb = ha;
    }
#pragma unroll
    for (int i = 0; i < 9; i++)
        out[i] = S::value(s[i]);
}

/* Row K (1 .. 2RC + 3) of disk_sums9 for a radius RC known at compile time, then the rows after
 * it: the same spans added to the same sums as disk_sums9's iteration K, but the half-widths
 * (ha, hb, hc: hwp[K + 1], hwp[K], hwp[K - 1]) and whether a row's spans are new are constants,
 * so the row is straight-line code: no table read, no branch, and the spans' offsets are
 * immediates of the loads. */
template <class S, int RC, int K>
__device__ __forceinline__ void disk_rows9_c(const typename S::row_t *row, int PW,
                                             typename S::acc_t (&s)[9])
{
    if constexpr (K <= 2 * RC + 3) {
        constexpr int ha = sim_disk_halfwidth(RC, K - RC - 1),
                      hb = sim_disk_halfwidth(RC, K - RC - 2),
                      hc = sim_disk_halfwidth(RC, K - RC - 3);
        constexpr int hp1 = ha >= 0 ? ha : -1, hp2 = hb >= 0 ? hb : hp1;
        typename S::span_t v0 = 0, v1 = 0, v2 = 0;
        if constexpr (ha >= 0) {
            S::spans3(row, ha, v0, v1, v2);
            add3<S>(s, 0, v0, v1, v2);
        }
        if constexpr (hb >= 0) {
            if constexpr (hb != hp1)
                S::spans3(row, hb, v0, v1, v2);
            add3<S>(s, 3, v0, v1, v2);
        }
        if constexpr (hc >= 0) {
            if constexpr (hc != hp2)
                S::spans3(row, hc, v0, v1, v2);
            add3<S>(s, 6, v0, v1, v2);
        }
        disk_rows9_c<S, RC, K + 1>(row + PW, PW, s);
    }
}

/* disk_sums9 for a radius RC known at compile time (g.r == RC): the same sums. */
template <class S, int RC, class G>
__device__ __forceinline__ void disk_sums9_c(const typename S::row_t *P, const G &g, int x, int y,
                                             int64_t out[9])
{
    typename S::acc_t s[9];
#pragma unroll
    for (int i = 0; i < 9; i++)
        s[i] = 0;
    disk_rows9_c<S, RC, 1>(P + (y - RC - 1) * g.PW + x, g.PW, s);
#pragma unroll
    for (int i = 0; i < 9; i++)
        out[i] = S::value(s[i]);
}

#endif
