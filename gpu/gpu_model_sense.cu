/* gpu_model_sense.cu - phases 1-2 of a model step on the device (sense, decide, claim) for every
 * species in one tile kernel, and the direct disk sums behind the viewer's and tests' reads.
 *
 * Why one combined grid per species: a species' score at a cell is the sum over its sense terms
 * of weight * (disk sum of the source), and by linearity that is the disk sum of ONE grid, the
 * per-cell sum of weight * source (sim_fix32 of a field, SIM_OCC_FIX for an agent of the sensed
 * species, 0 on walls). sim_model_cpu.c builds that grid and its prefix rows over the whole
 * world; here a block builds it for its tile plus a halo (R = max radius + 1 rows above and
 * below, the candidates sit one cell off the agent; L >= R + 1 columns on the left, R on the
 * right) in shared memory, straight from the fields and the occupancy words, so the grid never
 * goes to device memory. The sense list is folded per source on the host (gpu_md_species: one
 * weight per sensed field, a score per cell code for the occupancies), so a cell costs one load
 * and one multiply per sensed field and one table read for all the occupancy terms.
 *
 * Exactness: the sums are integers. With `wide` off every row span of every species is under
 * 2^31 in magnitude ((2r+1) * sum |weight| * max |source| < 2^31), so prefix rows kept modulo
 * 2^32 give each span exactly and the spans add in int64; otherwise the rows are int64. Either
 * way each candidate gets the bits of sim_model_cpu.c's disk_sum, in any order.
 *
 * Thread mapping of md_sense_kernel: one block of GPU_MD_THREADS per T x T tile; the region is
 * RS rows x PW columns, its first column aligned to 4 cells in the grid. The region load is the
 * fast path's (gpu_horizon_block.cuh, load_rows): a warp per region row, a lane per group of 4
 * cells (one uint4 of occupancy words, one float4 per sensed field when the width is a multiple
 * of 4), 128 columns per warp pass; the lane sums its 4 cells in registers and one warp scan
 * places them (the first version, a lane per cell and a 32-wide scan per 32 cells with the sense
 * terms walked per cell, took 0.61 ms on wolf-sheep-grass at 4096^2: gpu/BENCH.md, "Models").
 * Codes first (4 packed in a word of shared memory, for every species; a plain plan, no
 * occupancy senses and no walls, loads only the tile's and its border's), then per species: the
 * prefix rows; the tile's agents of that species (a thread per group of 4 tile cells finds them
 * with one byte-wise compare, three ballots and a shared atomic a warp list them in one walk; a
 * tile with more than `chunk` of them lists them in rounds of `chunk` in the tile's order, by a
 * block scan); one thread per agent sums its 9 candidates (the fast path's sparse sums: 2r+3
 * rows, the spans shared between candidates), decides and claims. Shared memory: RS x PW
 * prefix entries (4 or 8 B), chunk x 8 B of agent and position, RS x PW code bytes: ~38 KB at
 * T = 64, r = 4 and ~44 KB at r = 8 (5 blocks per multiprocessor). */
#include <math.h>
#include <string.h>

#include "gpu_check.h"
#include "gpu_disk_sums.cuh"
#include "gpu_horizon.h"
#include "gpu_model.h"
#include "gpu_policy.h"

extern "C" {
#include "sim_model_rules.h"
#include "sim_rules.h"
}

#define FULL_MASK 0xffffffffu
#define MD_OUT4 (GPU_MD_OUT * 0x01010101u) /* four cells beyond a bounded grid */
/* bit c: a cell of code c scores its fields (not a wall, not beyond the grid) */
#define MD_SCORING ((1u << 8) - 1u - (1u << GPU_MD_WALL) - (1u << GPU_MD_OUT))

typedef struct md_sense_args {
    const gpu_md_params *params;
    const float *field[SIM_MAX_FIELDS];
    const uint32_t *occ;
    const uint32_t *id[2]; /* the agent sets' ids: a[*cur] holds the agents */
    const unsigned *cur;
    unsigned long long *claim;
    uint32_t *lword, *lcell, *target; /* the move list (gpu_model.h) */
    unsigned long long *key;
    unsigned long long *listed;       /* its length so far */
    unsigned long long seed, step;
    int w, h, periodic, n_species;
    unsigned mask;
    gpu_md_plan plan;
    const unsigned *halt; /* non-zero: the step does nothing (gpu_model.h) */
} md_sense_args;

/* ---- Thread helpers ---- */

/* Coordinate v on an axis of n cells: itself inside, wrapped (any distance) on a periodic grid,
 * -1 outside a bounded one. */
__device__ __forceinline__ int md_axis(int v, int n, int periodic)
{
    if (v >= 0 && v < n)
        return v;
    if (!periodic)
        return -1;
    v %= n;
    return v < 0 ? v + n : v;
}

/* field[src] with constant indices only (a run-time index into a kernel parameter would copy
 * the parameter to local memory). */
__device__ __forceinline__ const float *md_field(const float *const f[SIM_MAX_FIELDS], int src)
{
    return src == 0 ? f[0] : src == 1 ? f[1] : src == 2 ? f[2] : f[3];
}

static_assert(SIM_MAX_FIELDS == 4, "md_field selects among 4 fields");

/* The exact value of one row span from two prefix entries. */
__device__ __forceinline__ int64_t md_span(uint32_t hi, uint32_t lo)
{
    return (int64_t)(int32_t)(hi - lo);
}
__device__ __forceinline__ int64_t md_span(long long hi, long long lo)
{
    return (int64_t)(hi - lo);
}

/* A species' score of one cell: sum of weight * source in int64 (code: the cell's code, g its
 * index), from the folded sense list. Walls and cells beyond a bounded grid score 0. */
__device__ __forceinline__ int64_t md_score64(const gpu_md_species *sp,
                                              const float *const f[SIM_MAX_FIELDS],
                                              unsigned code, size_t g)
{
    if (!((MD_SCORING >> code) & 1u))
        return 0;
    int64_t v = sp->occ_score[code];
    for (int t = 0; t < sp->n_fterm; t++)
        v += (int64_t)sp->fterm_w[t] * sim_fix32(md_field(f, sp->fterm_field[t])[g]);
    return v;
}

/* Four consecutive cells of grid row `base` (the row's first cell), from column gx0 on (region
 * columns 4k .. 4k+3). vec: the width is a multiple of 4, so gx0 (the region origin is aligned)
 * is too, also after a periodic wrap, and the four cells are one float4 of one row, or all
 * beyond a bounded grid (0). */
__device__ __forceinline__ float4 md_group(const float *__restrict__ f, size_t base, int gx0,
                                           int w, int periodic, bool inside, bool vec)
{
    if (vec) {
        int gx = gx0;
        if (!inside) {
            gx = md_axis(gx0, w, periodic);
            if (gx < 0)
                return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
        return __ldg(reinterpret_cast<const float4 *>(f + base + gx));
    }
    float v[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int gx = inside ? gx0 + k : md_axis(gx0 + k, w, periodic);
        v[k] = gx < 0 ? 0.0f : __ldg(f + base + gx);
    }
    return make_float4(v[0], v[1], v[2], v[3]);
}

/* The codes of four cells as md_group finds them, packed one byte each (cell k in byte k). */
__device__ __forceinline__ uint32_t md_codes4(const uint32_t *__restrict__ occ, size_t base,
                                              int gx0, int w, int periodic, bool inside, bool vec)
{
    if (vec) {
        int gx = gx0;
        if (!inside) {
            gx = md_axis(gx0, w, periodic);
            if (gx < 0)
                return MD_OUT4;
        }
        const uint4 o = __ldg(reinterpret_cast<const uint4 *>(occ + base + gx));
        return gpu_md_code(o.x) | gpu_md_code(o.y) << 8 | gpu_md_code(o.z) << 16 |
               gpu_md_code(o.w) << 24;
    }
    uint32_t c4 = 0;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int gx = inside ? gx0 + k : md_axis(gx0 + k, w, periodic);
        c4 |= (gx < 0 ? GPU_MD_OUT : gpu_md_code(__ldg(occ + base + gx))) << (8 * k);
    }
    return c4;
}

/* Four prefix entries to a 16-byte aligned place in shared memory, in one or two stores. */
__device__ __forceinline__ void md_store4(uint32_t *d, uint32_t a, uint32_t b, uint32_t c,
                                          uint32_t e)
{
    *reinterpret_cast<uint4 *>(d) = make_uint4(a, b, c, e);
}
__device__ __forceinline__ void md_store4(long long *d, long long a, long long b, long long c,
                                          long long e)
{
    reinterpret_cast<longlong2 *>(d)[0] = make_longlong2(a, b);
    reinterpret_cast<longlong2 *>(d)[1] = make_longlong2(c, e);
}

/* ---- Warp and block helpers ---- */

/* Block-wide exclusive scan of one int per thread (warp shuffles, one barrier pair); *total
 * gets the sum. wsum: nwarps ints of shared memory. */
__device__ __forceinline__ int md_block_scan(int v, int *wsum, int *total)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    int x = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        int u = __shfl_up_sync(FULL_MASK, x, o);
        if (lane >= o)
            x += u;
    }
    if (lane == 31)
        wsum[warp] = x;
    __syncthreads();
    int before = 0, all = 0;
    for (int k = 0; k < nw; k++) {
        const int t = wsum[k];
        before += k < warp ? t : 0;
        all += t;
    }
    __syncthreads(); /* wsum may be reused */
    *total = all;
    return before + x - v;
}

/* ---- Block routines: one tile ---- */

/* The region's codes (the state at the start of the step, for every species): cs32[row * NG +
 * k] packs region cells (row, 4k .. 4k+3). A warp per row, a lane per group, GPU_MD_LOAD_ROWS
 * rows' loads in flight before any is stored (a region is ~80 scattered rows: latency is the
 * cost). A plain plan (gpu_model.h) loads only the rows and groups that hold the tile and its
 * one-cell border (rows R-1 .. R+T; L is a multiple of 4, so columns L-1 .. L+T are groups L/4-1
 * .. (L+T)/4); the rest of cs32 is never read then. No barrier. */
__device__ __forceinline__ void md_load_codes(uint32_t *cs32, const md_sense_args &a, int ox,
                                              int oy, bool inside, bool vec)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const gpu_md_plan &pl = a.plan;
    const int NG = pl.PW >> 2;
    const int row0 = pl.plain ? pl.R - 1 : 0, row1 = pl.plain ? pl.R + pl.T + 1 : pl.RS;
    const int k0 = pl.plain ? (pl.L >> 2) - 1 : 0, k1 = pl.plain ? ((pl.L + pl.T) >> 2) + 1 : NG;
    for (int r0 = row0 + warp; r0 < row1; r0 += GPU_MD_LOAD_ROWS * nw)
        for (int k = k0 + lane; k < k1; k += 32) {
            uint32_t c4[GPU_MD_LOAD_ROWS];
#pragma unroll
            for (int q = 0; q < GPU_MD_LOAD_ROWS; q++) {
                const int row = r0 + q * nw;
                const int gy = row >= row1 ? -1
                               : inside    ? oy + row
                                           : md_axis(oy + row, a.h, a.periodic);
                c4[q] = gy < 0 ? MD_OUT4
                               : md_codes4(a.occ, (size_t)gy * a.w, ox + 4 * k, a.w, a.periodic,
                                           inside, vec);
            }
#pragma unroll
            for (int q = 0; q < GPU_MD_LOAD_ROWS; q++)
                if (r0 + q * nw < row1)
                    cs32[(r0 + q * nw) * NG + k] = c4[q];
        }
}

/* Species terms as md_prefix_rows reads them (shared memory, every species' loaded once a block
 * by md_load_terms). */
typedef struct md_terms {
    const float *fp[SIM_MAX_FIELDS];
    int32_t fw[SIM_MAX_FIELDS];
    int32_t occ[1 << GPU_MD_CODE_BITS];
    int nf, radius;
} md_terms;

/* Every species' terms into shared memory, warp s for species s, so that their loads overlap
 * the codes' (the barrier after the codes publishes them). */
__device__ __forceinline__ void md_load_terms(md_terms *tms, const md_sense_args &a)
{
    const int lane = threadIdx.x & 31, s = threadIdx.x >> 5;
    if (s >= a.n_species)
        return;
    const gpu_md_species *sp = &a.params->sp[s];
    md_terms &t = tms[s];
    if (lane < (1 << GPU_MD_CODE_BITS))
        t.occ[lane] = sp->occ_score[lane];
    if (lane < SIM_MAX_FIELDS) {
        t.fp[lane] = lane < sp->n_fterm ? md_field(a.field, sp->fterm_field[lane]) : NULL;
        t.fw[lane] = sp->fterm_w[lane];
    }
    if (lane == 0) {
        t.nf = sp->n_fterm;
        t.radius = sp->radius;
    }
}

/* The region's rows split among the warps: warp w takes rows RS * w / nw .. RS * (w + 1) / nw
 * (its range of groups of 4 cells, in row order; every range starts at a row's start). */
__device__ __forceinline__ void md_warp_rows(const gpu_md_plan &pl, int *begin, int *end)
{
    constexpr int nw = GPU_MD_THREADS / 32;
    const int w = (int)(threadIdx.x >> 5);
    *begin = pl.RS * w / nw;
    *end = pl.RS * (w + 1) / nw;
}

/* The inclusive prefix rows of one species' combined score over the region: P[row * PW + j] =
 * the row's score summed over columns 0..j. A lane per group of 4 cells, each warp over its
 * rows (md_warp_rows) 32 groups a pass, whatever rows they fall in (a region row of 22 groups
 * would leave 10 lanes idle): the lane sums its cells in registers, one warp scan segmented by
 * row adds the lanes up (lanes l and l-o share a row when the group's column k >= o), and a
 * carry crosses the passes within a row. NF sensed fields (0 ..
 * SIM_MAX_FIELDS, known at compile time so that the loads sit in registers), ROWS passes at
 * once: their field loads are all issued before the first is used. CODES off (a plain plan,
 * gpu_model.h): every occupancy score is 0 and no cell is a wall, so a cell's score is its
 * fields' terms (0 beyond a bounded grid) and the codes are not read. No barrier. */
template <typename PT, int NF, int ROWS, bool CODES>
__device__ __forceinline__ void md_prefix_rows(PT *P, const uint32_t *cs32, const md_terms &tm,
                                               const md_sense_args &a, int ox, int oy,
                                               bool inside, bool vec)
{
    const int lane = threadIdx.x & 31, NG = a.plan.PW >> 2;
    int row, row_end;
    md_warp_rows(a.plan, &row, &row_end);
    const int g_begin = row * NG, g_end = row_end * NG;
    /* this lane's group in the pass: its row and column, advanced 32 groups a pass */
    int k = lane;
    while (k >= NG) {
        k -= NG;
        row++;
    }
    PT carry = 0;
    int crow = -1; /* the row the carry belongs to */
    for (int g0 = g_begin; g0 < g_end; g0 += 32 * ROWS) {
        float4 f[ROWS][NF > 0 ? NF : 1];
        uint32_t c4[ROWS];
        int rq[ROWS], kq[ROWS];
#pragma unroll
        for (int q = 0; q < ROWS; q++) {
            rq[q] = row;
            kq[q] = k;
            const int g = g0 + 32 * q + lane;
            const bool on = g < g_end;
            const int gy = !on ? -1 : inside ? oy + row : md_axis(oy + row, a.h, a.periodic);
            c4[q] = CODES && on ? cs32[g] : MD_OUT4;
#pragma unroll
            for (int t = 0; t < NF; t++)
                f[q][t] = gy >= 0 ? md_group(tm.fp[t], (size_t)gy * a.w, ox + 4 * k, a.w,
                                             a.periodic, inside, vec)
                                  : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            k += 32;
            while (k >= NG) {
                k -= NG;
                row++;
            }
        }
#pragma unroll
        for (int q = 0; q < ROWS; q++) {
            if (g0 + 32 * q >= g_end)
                break; /* uniform across the warp */
            const int g = g0 + 32 * q + lane;
            PT v[4], fs[4] = {0, 0, 0, 0};
#pragma unroll
            for (int t = 0; t < NF; t++) {
                /* uint32 rows: products and sums modulo 2^32 (exact spans, above) */
                const PT wt = (PT)tm.fw[t];
                fs[0] += wt * (PT)sim_fix32(f[q][t].x);
                fs[1] += wt * (PT)sim_fix32(f[q][t].y);
                fs[2] += wt * (PT)sim_fix32(f[q][t].z);
                fs[3] += wt * (PT)sim_fix32(f[q][t].w);
            }
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const unsigned c = (c4[q] >> (8 * e)) & 0xFFu;
                v[e] = CODES ? (PT)tm.occ[c] : fs[e];
                if (CODES && NF > 0 && ((MD_SCORING >> c) & 1u))
                    v[e] += fs[e];
            }
            v[1] += v[0];
            v[2] += v[1];
            v[3] += v[2];
            PT inc = v[3];
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                PT u = __shfl_up_sync(FULL_MASK, inc, o);
                if (lane >= o && kq[q] >= o)
                    inc += u;
            }
            const PT add = (rq[q] == crow ? carry : (PT)0) + inc - v[3];
            if (g < g_end)
                md_store4(P + 4 * g, v[0] + add, v[1] + add, v[2] + add, v[3] + add);
            /* lane 31's row and inclusive value carry into the next pass */
            carry = __shfl_sync(FULL_MASK, add + v[3], 31);
            crow = __shfl_sync(FULL_MASK, rq[q], 31);
        }
    }
}

/* md_prefix_rows for the run-time field count and plan (uniform across the block): row batches
 * that keep the loads of a batch within four float4 registers a lane; the plain rows for one or
 * two fields (the common plain models), the rows with codes otherwise. */
template <typename PT>
__device__ __forceinline__ void md_prefix(PT *P, const uint32_t *cs32, const md_terms &tm,
                                          const md_sense_args &a, int ox, int oy, bool inside,
                                          bool vec)
{
    if (a.plan.plain && tm.nf == 1)
        md_prefix_rows<PT, 1, GPU_MD_LOAD_ROWS, false>(P, cs32, tm, a, ox, oy, inside, vec);
    else if (a.plan.plain && tm.nf == 2)
        md_prefix_rows<PT, 2, GPU_MD_LOAD_ROWS / 2, false>(P, cs32, tm, a, ox, oy, inside, vec);
    else
        switch (tm.nf) {
        case 0:
            md_prefix_rows<PT, 0, 1, true>(P, cs32, tm, a, ox, oy, inside, vec);
            break;
        case 1:
            md_prefix_rows<PT, 1, GPU_MD_LOAD_ROWS, true>(P, cs32, tm, a, ox, oy, inside, vec);
            break;
        case 2:
            md_prefix_rows<PT, 2, GPU_MD_LOAD_ROWS / 2, true>(P, cs32, tm, a, ox, oy, inside,
                                                              vec);
            break;
        case 3:
            md_prefix_rows<PT, 3, 1, true>(P, cs32, tm, a, ox, oy, inside, vec);
            break;
        default:
            md_prefix_rows<PT, 4, 1, true>(P, cs32, tm, a, ox, oy, inside, vec);
            break;
        }
}

/* The shape of a species' prefix rows for disk_sums9: PW entries a row, radius r. */
struct md_rows {
    int PW, r;
};

/* The model engine's prefix rows for disk_sums9 (gpu_disk_sums.cuh): entries of type PT,
 * spans as exact int32 values in int64 (md_span), accumulated in AT: int64, or (a species whose
 * whole disk is under 2^31, plan.small) uint32 modulo 2^32, exact the same way as the rows. */
template <typename PT, typename AT> struct md_sparse {
    typedef PT row_t;
    typedef int64_t span_t;
    typedef AT acc_t;
    __device__ static __forceinline__ void spans3(const PT *row, int h, int64_t &v0, int64_t &v1,
                                                  int64_t &v2)
    {
        const PT *hi = row + h, *lo = row - h;
        v0 = md_span(hi[-1], lo[-2]);
        v1 = md_span(hi[0], lo[-1]);
        v2 = md_span(hi[1], lo[0]);
    }
    __device__ static __forceinline__ void add(AT &s, int64_t v)
    {
        s += (AT)v;
    }
    __device__ static __forceinline__ int64_t value(AT s)
    {
        return sizeof(AT) == 4 ? (int64_t)(int32_t)s : (int64_t)s;
    }
};

/* The 9 candidate sums of the agent at region cell (ax, ay), in slot order (slot = (dy+1)*3 +
 * dx+1), from the prefix rows: the fast path's walk (disk_sums9) for either prefix width. hwp[d] =
 * half-width of disk row d - r - 2, -1 outside the disk. */
template <typename PT, typename AT>
__device__ __forceinline__ void md_sparse_sums(const PT *P, int PW, const int *hwp, int r, int ax,
                                               int ay, int64_t out[9])
{
    const md_rows g = {PW, r};
    disk_sums9<md_sparse<PT, AT>>(P, g, hwp, ax, ay, out);
}

/* md_sparse_sums for a species whose radius is RC, known at compile time. */
template <typename PT, typename AT, int RC>
__device__ __forceinline__ void md_sparse_sums_c(const PT *P, int PW, int ax, int ay,
                                                 int64_t out[9])
{
    const md_rows g = {PW, RC};
    disk_sums9_c<md_sparse<PT, AT>, RC>(P, g, ax, ay, out);
}

/* The tile's cells of species s in a group-of-4 walk: thread t takes groups t, t + nt, ...;
 * the bytes of a group that hold code s (and lie in the grid) as a mask of 0xFF bytes. */
__device__ __forceinline__ uint32_t md_group_match(const uint32_t *cs32, const md_sense_args &a,
                                                   int x0, int y0, int q, unsigned s, int *lx,
                                                   int *ly)
{
    const gpu_md_plan &pl = a.plan;
    const int gq = q & ((pl.T >> 2) - 1);
    *ly = q >> (pl.log2T - 2);
    *lx = 4 * gq;
    if (y0 + *ly >= a.h)
        return 0;
    uint32_t m = __vcmpeq4(cs32[(pl.R + *ly) * (pl.PW >> 2) + (pl.L >> 2) + gq], s * 0x01010101u);
    const int room = a.w - (x0 + *lx); /* cells of the group inside the grid */
    if (room < 4)
        m &= room <= 0 ? 0u : (1u << (8 * room)) - 1u;
    return m;
}

/* The tile's agents of species s in one walk, in no particular order (the move list's order
 * changes no result: claims are settled by their keys, each agent deposits into its own cell):
 * a thread per group of 4 tile cells; a group holds at most 4 agents, so three ballots of its
 * count's bits give each lane its place in the warp and the warp's total, and one shared-memory
 * atomic a warp places the warp at la/lp[*n ..]; entries past `chunk` are counted, not stored.
 * The caller's barrier publishes *n (zeroed before the walk). */
__device__ __forceinline__ void md_list_walk(const uint32_t *cs32, const md_sense_args &a,
                                             int x0, int y0, unsigned s, uint32_t *la,
                                             uint32_t *lp, int *n)
{
    const gpu_md_plan &pl = a.plan;
    const int lane = threadIdx.x & 31, nt = blockDim.x;
    const int TG = pl.T * pl.T / 4, chunk = pl.chunk;
    const bool whole = x0 + pl.T <= a.w && y0 + pl.T <= a.h; /* no cell beyond the grid */
    const unsigned below = (1u << lane) - 1u;
    for (int q0 = 0; q0 < TG; q0 += nt) {
        const int q = q0 + (int)threadIdx.x;
        int lx = 0, ly = 0;
        uint32_t m = 0;
        if (q < TG) {
            if (whole) {
                ly = q >> (pl.log2T - 2);
                lx = 4 * (q & ((pl.T >> 2) - 1));
                m = __vcmpeq4(cs32[(pl.R + ly) * (pl.PW >> 2) + ((pl.L + lx) >> 2)],
                              s * 0x01010101u);
            } else {
                m = md_group_match(cs32, a, x0, y0, q, s, &lx, &ly);
            }
        }
        const int c = __popc(m) >> 3; /* 0 .. 4 */
        const unsigned b0 = __ballot_sync(FULL_MASK, c & 1), b1 = __ballot_sync(FULL_MASK, c & 2),
                       b2 = __ballot_sync(FULL_MASK, c & 4);
        const int wt = __popc(b0) + 2 * __popc(b1) + 4 * __popc(b2);
        if (wt == 0)
            continue; /* uniform across the warp */
        int base = 0;
        if (lane == 0)
            base = atomicAdd(n, wt);
        int k = __shfl_sync(FULL_MASK, base, 0) + __popc(b0 & below) + 2 * __popc(b1 & below) +
                4 * __popc(b2 & below);
        while (m) {
            const int e = (__ffs(m) - 1) >> 3;
            m &= ~(0xFFu << (8 * e));
            if (k < chunk) {
                la[k] = (uint32_t)((size_t)(y0 + ly) * a.w + (x0 + lx + e));
                lp[k] = (uint32_t)(lx + e) | ((uint32_t)ly << 16);
            }
            k++;
        }
    }
}

/* The move list's entry of one served agent (gpu_model.h). */
typedef struct md_entry {
    uint32_t word, cell, target;
    unsigned long long key;
} md_entry;

/* Listed agent k (la/lp[k]) of species s: its 9 sums, the decision (sim_decide) and the claim
 * of an empty target. */
template <typename PT, typename AT>
__device__ __forceinline__ md_entry md_serve_one(const md_sense_args &a, const gpu_md_species *sp,
                                                 unsigned s, const PT *P, const uint8_t *cs,
                                                 const int *hwp, const uint32_t *la,
                                                 const uint32_t *lp, int k, int x0, int y0)
{
    const gpu_md_plan &pl = a.plan;
    const int L = pl.L, R = pl.R, PW = pl.PW, r = sp->radius, w = a.w, h = a.h;
    const uint32_t own = la[k], pos = lp[k];
    const uint32_t ag = gpu_md_index(__ldg(a.occ + own));
    const int ax = (int)(pos & 0xFFFFu), ay = (int)(pos >> 16);
    const uint32_t id = __ldg(a.id[*a.cur] + ag);
    int64_t sl[9], s9[SIM_NCAND];
    if (r == pl.rc) /* the radius compiled in: straight-line sums */
        md_sparse_sums_c<PT, AT, GPU_HZ_RC>(P, PW, ax + L, ay + R, sl);
    else
        md_sparse_sums<PT, AT>(P, PW, hwp, r, ax + L, ay + R, sl);
#pragma unroll
    for (int c = 0; c < SIM_NCAND; c++) {
        const unsigned cc = cs[(ay + R + sim_cand_dy(c)) * PW + ax + L + sim_cand_dx(c)];
        s9[c] = cc == GPU_MD_WALL || cc == GPU_MD_OUT ? SIM_SUM_INVALID : sl[sim_cand_slot(c)];
    }
    const sim_u32x4 rn = sim_random(a.seed, a.step, id, SIM_RNG_STEP);
    const int c = sim_decide(s9, rn, sp->threshold);
    const int dx = sim_cand_dx(c), dy = sim_cand_dy(c);
    const unsigned cc = cs[(ay + R + dy) * PW + ax + L + dx];
    md_entry e = {gpu_md_word(s, ag), own, own, 0ull};
    if (cc == GPU_MD_EMPTY) { /* inside the grid, not a wall, nobody on it */
        const int gx = md_axis(x0 + ax + dx, w, a.periodic);
        const int gy = md_axis(y0 + ay + dy, h, a.periodic);
        const uint32_t t = (uint32_t)((size_t)gy * w + gx);
        if (t != own) {
            e.key = sim_claim_key(rn, ag);
            atomicMax(&a.claim[t], e.key);
            e.target = t;
        }
    }
    return e;
}

__device__ __forceinline__ void md_entry_put(const md_sense_args &a, size_t at, const md_entry &e)
{
    a.lword[at] = e.word;
    a.lcell[at] = e.cell;
    a.target[at] = e.target;
    a.key[at] = e.key;
}

/* One thread per listed agent (la/lp[0 .. cnt)), its entry at the list's place at0 + k. */
template <typename PT, typename AT>
__device__ __forceinline__ void md_serve(const md_sense_args &a, const gpu_md_species *sp,
                                         unsigned s, const PT *P, const uint8_t *cs,
                                         const int *hwp, const uint32_t *la, const uint32_t *lp,
                                         int cnt, unsigned long long at0, int x0, int y0)
{
    for (int k = threadIdx.x; k < cnt; k += blockDim.x)
        md_entry_put(a, (size_t)(at0 + (unsigned long long)k),
                     md_serve_one<PT, AT>(a, sp, s, P, cs, hwp, la, lp, k, x0, y0));
}

template <typename PT, typename AT, int MINB>
__global__ void __launch_bounds__(GPU_MD_THREADS, MINB) md_sense_kernel(md_sense_args a)
{
    if (*a.halt)
        return; /* the whole grid */
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ int hwp[2 * SIM_MAX_RADIUS + 5];
    __shared__ md_terms tms[SIM_MAX_SPECIES];
    __shared__ int wsum[GPU_MD_THREADS / 32];
    __shared__ int nlist;                /* this species' agents on the tile (md_list_walk) */
    __shared__ unsigned long long lbase; /* this tile's species' places in the move list */

    const gpu_md_plan &pl = a.plan;
    const int T = pl.T, R = pl.R, L = pl.L, RS = pl.RS, PW = pl.PW, chunk = pl.chunk;
    const size_t p_bytes = ((size_t)RS * PW * sizeof(PT) + 15) & ~(size_t)15;
    PT *P = (PT *)smem;
    uint32_t *la = (uint32_t *)(smem + p_bytes);
    uint32_t *lp = la + chunk;
    uint32_t *cs32 = lp + chunk;
    const uint8_t *cs = (const uint8_t *)cs32;

    const int tid = threadIdx.x, nt = blockDim.x;
    const int w = a.w, h = a.h;
    const int x0 = (int)(blockIdx.x % (unsigned)pl.ntx) * T;
    const int y0 = (int)(blockIdx.x / (unsigned)pl.ntx) * T;
    const int ox = x0 - L, oy = y0 - R; /* the region's origin in the grid */
    /* the whole region inside the grid: no wrapping, no checks */
    const bool inside = ox >= 0 && oy >= 0 && ox + PW <= w && oy + RS <= h;
    const bool vec = (w & 3) == 0;
    const int TG = T * T / 4; /* groups of 4 cells in the tile */

    /* the first species' radius read before the codes, used after them */
    const unsigned todo = a.mask & ((1u << a.n_species) - 1u);
    const int s0 = __ffs(todo) - 1;
    const int r0 = s0 >= 0 ? a.params->sp[s0].radius : 0;
    md_load_terms(tms, a);
    md_load_codes(cs32, a, ox, oy, inside, vec);

    for (int s = s0; s >= 0 && s < a.n_species; s++) {
        if (!((todo >> s) & 1u))
            continue;
        const gpu_md_species *sp = &a.params->sp[s];
        const md_terms &tm = tms[s];
        /* the terms are published by the first barrier, the first species' radius is known */
        const int r = s == s0 ? r0 : tm.radius;
        for (int i = tid; i <= 2 * r + 4; i += nt)
            hwp[i] = sim_disk_halfwidth(r, i - r - 2); /* -1 outside the disk */
        if (tid == 0)
            nlist = 0;
        __syncthreads(); /* codes, terms, tables; the previous species' agents are done */

        md_prefix<PT>(P, cs32, tm, a, ox, oy, inside, vec);

        /* The tile's agents of species s in one walk; the barrier publishes the prefix rows,
         * the list and its length. */
        md_list_walk(cs32, a, x0, y0, (unsigned)s, la, lp, &nlist);
        __syncthreads();
        const int total = nlist;
        if (total <= nt) { /* an agent a thread at most: its entry waits in registers */
            if (tid == 0 && total > 0) /* published by the barrier below */
                lbase = atomicAdd(a.listed, (unsigned long long)total);
            md_entry e = {0u, 0u, 0u, 0ull};
            if (tid < total)
                e = md_serve_one<PT, AT>(a, sp, (unsigned)s, P, cs, hwp, la, lp, tid, x0, y0);
            __syncthreads(); /* the list is free for the next species; lbase is known */
            if (tid < total)
                md_entry_put(a, (size_t)(lbase + (unsigned long long)tid), e);
            continue;
        }
        if (total <= chunk) {
            if (tid == 0)
                lbase = atomicAdd(a.listed, (unsigned long long)total);
            __syncthreads();
            md_serve<PT, AT>(a, sp, (unsigned)s, P, cs, hwp, la, lp, total, lbase, x0, y0);
            __syncthreads(); /* the list is free for the next species */
            continue;
        }

        /* More than `chunk` of them (a crowded tile): rounds of `chunk` agents in the tile's
         * order; a thread counts its groups' agents and a block scan gives each its place. */
        int mine = 0, lx, ly;
        for (int q = tid; q < TG; q += nt)
            mine += __popc(md_group_match(cs32, a, x0, y0, q, (unsigned)s, &lx, &ly)) >> 3;
        int all = 0;
        const int first = md_block_scan(mine, wsum, &all);
        if (tid == 0) /* published by the first round's barrier */
            lbase = atomicAdd(a.listed, (unsigned long long)total);
        for (int round = 0; round < total; round += chunk) {
            if (mine > 0 && first < round + chunk && first + mine > round) {
                int k = first;
                for (int q = tid; q < TG; q += nt) {
                    uint32_t m = md_group_match(cs32, a, x0, y0, q, (unsigned)s, &lx, &ly);
                    while (m) {
                        const int e = (__ffs(m) - 1) >> 3;
                        m &= ~(0xFFu << (8 * e));
                        if (k >= round && k < round + chunk) {
                            /* the cell; its agent is read by the thread that serves it */
                            la[k - round] = (uint32_t)((size_t)(y0 + ly) * w + (x0 + lx + e));
                            lp[k - round] = (uint32_t)(lx + e) | ((uint32_t)ly << 16);
                        }
                        k++;
                    }
                }
            }
            __syncthreads();
            const int cnt = total - round < chunk ? total - round : chunk;
            md_serve<PT, AT>(a, sp, (unsigned)s, P, cs, hwp, la, lp, cnt,
                             lbase + (unsigned long long)round, x0, y0);
            __syncthreads(); /* the list is free for the next round */
        }
    }
}

/* ---- Direct sums (tests, viewer) ---- */

/* One thread per (query, candidate): sim_model_cpu.c's scores_at by direct summation of the
 * disk (O(r^2) loads; exact integers, so the same bits as the prefix rows). */
__global__ void md_scores_kernel(const gpu_md_params *__restrict__ prm, int sp_i,
                                 md_sense_args a, const uint32_t *__restrict__ cells, int64_t n,
                                 int64_t *__restrict__ out)
{
    const int64_t it = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (it >= n * SIM_NCAND)
        return;
    const gpu_md_species *sp = &prm->sp[sp_i];
    const int64_t q = it / SIM_NCAND;
    const int c = (int)(it - q * SIM_NCAND), w = a.w, h = a.h, per = a.periodic, r = sp->radius;
    const int x = (int)(cells[q] % (uint32_t)w), y = (int)(cells[q] / (uint32_t)w);
    const int cx = md_axis(x + sim_cand_dx(c), w, per), cy = md_axis(y + sim_cand_dy(c), h, per);
    if (cx < 0 || cy < 0 || gpu_md_code(a.occ[(size_t)cy * w + cx]) == GPU_MD_WALL) {
        out[it] = SIM_SUM_INVALID;
        return;
    }
    int64_t sum = 0;
    for (int dy = -r; dy <= r; dy++) {
        const int yy = md_axis(cy + dy, h, per);
        if (yy < 0)
            continue;
        const int hh = sim_disk_halfwidth(r, dy);
        for (int dx = -hh; dx <= hh; dx++) {
            const int xx = md_axis(cx + dx, w, per);
            if (xx < 0)
                continue;
            const size_t g = (size_t)yy * w + xx;
            sum += md_score64(sp, a.field, gpu_md_code(a.occ[g]), g);
        }
    }
    out[it] = sum;
}

/* One thread per sample: the disk sum of the output field's fixed-point values (walls 0). */
__global__ void md_region_kernel(md_sense_args a, const float *__restrict__ f, int r,
                                 const int32_t *__restrict__ xs, int nx,
                                 const int32_t *__restrict__ ys, int ny, int64_t *__restrict__ out)
{
    const int64_t it = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (it >= (int64_t)nx * ny)
        return;
    const int iy = (int)(it / nx), ix = (int)(it - (int64_t)iy * nx);
    const int w = a.w, h = a.h, per = a.periodic;
    int64_t sum = 0;
    for (int dy = -r; dy <= r; dy++) {
        const int yy = md_axis(ys[iy] + dy, h, per);
        if (yy < 0)
            continue;
        const int hh = sim_disk_halfwidth(r, dy);
        for (int dx = -hh; dx <= hh; dx++) {
            const int xx = md_axis(xs[ix] + dx, w, per);
            if (xx < 0)
                continue;
            const size_t g = (size_t)yy * w + xx;
            if (gpu_md_code(a.occ[g]) != GPU_MD_WALL)
                sum += sim_fix32(f[g]);
        }
    }
    out[it] = sum;
}

/* ---- Dispatch ---- */

/* The region's left margin (>= R + 1: the inclusive prefix rows need the column before a span)
 * and width for tile side T and halo R, both multiples of 4. */
static int sense_margin(int R)
{
    return (R + 1 + 3) & ~3;
}
static int sense_width(int T, int R)
{
    return (sense_margin(R) + T + R + 3) & ~3;
}

/* Shared memory of a sense block for tile side T, halo R, prefix entry size pe, chunk. */
static size_t sense_smem(int T, int R, size_t pe, int chunk)
{
    const size_t RS = (size_t)T + 2 * (size_t)R, PW = (size_t)sense_width(T, R);
    const size_t p = (RS * PW * pe + 15) & ~(size_t)15;
    return p + (size_t)chunk * 2 * sizeof(uint32_t) + RS * PW;
}

/* 1 when every row span of species sp stays under 2^31 in magnitude (sim_rules.h). */
static int spans_fit_32(const gpu_md_species *sp)
{
    double bound = 0.0;
    for (int t = 0; t < sp->n_sense; t++) {
        double mx = sp->src[t] >= SIM_SRC_OCC ? (double)SIM_OCC_FIX : (double)SIM_FIX_CELL_MAX;
        bound += fabs((double)sp->weight[t]) * mx;
    }
    return (2.0 * sp->radius + 1.0) * bound < 2147483648.0;
}

static md_sense_args sense_args(const gpu_model *g)
{
    md_sense_args a;
    memset(&a, 0, sizeof a);
    a.params = g->d_params;
    for (int f = 0; f < g->m.n_fields; f++)
        a.field[f] = g->d_field[f];
    a.occ = g->d_occ;
    a.id[0] = g->a[0].id;
    a.id[1] = g->sets > 1 ? g->a[1].id : g->a[0].id;
    a.cur = &g->d_run->cur;
    a.claim = g->d_claim;
    a.lword = g->d_lword;
    a.lcell = g->d_lcell;
    a.target = g->d_target;
    a.key = g->d_key;
    a.listed = &g->d_ctl->listed;
    a.seed = g->p.seed;
    a.w = g->p.w;
    a.h = g->p.h;
    a.periodic = g->p.periodic;
    a.n_species = g->p.n_species;
    a.plan = g->plan;
    a.halt = &g->d_run->halt;
    return a;
}

/* 1 when every candidate sum of species sp (a whole disk) stays under 2^31 in magnitude: its
 * accumulators can then be 32-bit, exact modulo 2^32. */
static int disks_fit_32(const gpu_md_species *sp)
{
    double bound = 0.0, cells = 0.0;
    for (int t = 0; t < sp->n_sense; t++) {
        double mx = sp->src[t] >= SIM_SRC_OCC ? (double)SIM_OCC_FIX : (double)SIM_FIX_CELL_MAX;
        bound += fabs((double)sp->weight[t]) * mx;
    }
    for (int dy = -sp->radius; dy <= sp->radius; dy++)
        cells += 2.0 * sim_disk_halfwidth(sp->radius, dy) + 1.0;
    return cells * bound < 2147483648.0;
}

typedef void (*md_sense_fn)(md_sense_args);

/* The sense kernel's instance for a plan: prefix rows of 32 or 64 bits (wide), sums of 32 bits
 * (small) or 64, launch bounds of 1 or GPU_MD_MINB_HIGH blocks. */
static md_sense_fn sense_kernel_of(const gpu_md_plan *pl)
{
    const int hi = pl->minb != 1;
    if (pl->wide)
        return hi ? md_sense_kernel<long long, int64_t, GPU_MD_MINB_HIGH>
                  : md_sense_kernel<long long, int64_t, 1>;
    if (pl->small)
        return hi ? md_sense_kernel<uint32_t, uint32_t, GPU_MD_MINB_HIGH>
                  : md_sense_kernel<uint32_t, uint32_t, 1>;
    return hi ? md_sense_kernel<uint32_t, int64_t, GPU_MD_MINB_HIGH>
              : md_sense_kernel<uint32_t, int64_t, 1>;
}

/* Raises the sense kernel's shared-memory limit and asks for the largest carveout (the default
 * may leave room for fewer blocks than the registers allow); the resident blocks per
 * multiprocessor into *per_sm. */
static int sense_setup(md_sense_fn k, size_t smem, int *per_sm, sim_err *err)
{
    GPU_CHECK(err, cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)smem));
    GPU_CHECK(err, cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout,
                                        cudaSharedmemCarveoutMaxShared));
    GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, k, GPU_MD_THREADS, smem));
    return SIM_OK;
}

/* 1 when some cell of the world is a wall (the map is kept on the host, keep_maps). */
static int any_wall(const gpu_model *g)
{
    if (!g->h_walls)
        return 0;
    for (int64_t i = 0; i < g->cells; i++)
        if (g->h_walls[i])
            return 1;
    return 0;
}

int gpu_md_plan_make(gpu_model *g, int tile, int minb, sim_err *err)
{
    gpu_md_plan *pl = &g->plan;
    memset(pl, 0, sizeof *pl);
    int rmax = 0;
    pl->wide = 0;
    pl->small = 1;
    for (int s = 0; s < g->p.n_species; s++) {
        if (g->p.sp[s].radius > rmax)
            rmax = g->p.sp[s].radius;
        if (!spans_fit_32(&g->p.sp[s]))
            pl->wide = 1;
        if (!disks_fit_32(&g->p.sp[s]))
            pl->small = 0;
    }
    pl->small &= !pl->wide;
    const size_t pe = pl->wide ? sizeof(long long) : sizeof(uint32_t);
    pl->R = rmax + 1;
    pl->T = 0;
    for (int T = tile > 0 ? tile : GPU_MD_TILE; T >= GPU_MD_TILE_MIN && !pl->T; T /= 2) {
        const int chunk = T * T < GPU_MD_CHUNK ? T * T : GPU_MD_CHUNK;
        if (sense_smem(T, pl->R, pe, chunk) <= GPU_MD_SMEM_MAX) {
            pl->T = T;
            pl->chunk = chunk;
        }
    }
    if (!pl->T)
        return sim_err_set(err, SIM_EINVAL, "cuda model engine: radius %d needs more shared "
                           "memory than a block has", rmax);
    while ((1 << pl->log2T) < pl->T)
        pl->log2T++;
    pl->RS = pl->T + 2 * pl->R;
    pl->L = sense_margin(pl->R);
    pl->PW = sense_width(pl->T, pl->R);
    pl->ntx = (g->p.w + pl->T - 1) / pl->T;
    pl->nty = (g->p.h + pl->T - 1) / pl->T;
    pl->smem = sense_smem(pl->T, pl->R, pe, pl->chunk);
    pl->minb = minb > 0 ? minb : GPU_MD_MINB;
    /* The species of radius GPU_HZ_RC sum by the compiled-in instance, as the fast path's
     * tile sums do (-1: none, so that no radius matches). */
    int rc_on = 1;
    GPU_TRY(gpu_hz_rc_enabled(&rc_on, err));
    pl->rc = rc_on ? GPU_HZ_RC : -1;
    pl->plain = !any_wall(g);
    for (int s = 0; s < g->p.n_species; s++)
        for (int c = 0; c < (1 << GPU_MD_CODE_BITS); c++)
            pl->plain &= g->p.sp[s].occ_score[c] == 0;
    GPU_TRY(sense_setup(sense_kernel_of(pl), pl->smem, &pl->per_sm, err));
    return SIM_OK;
}

int gpu_md_sense(gpu_model *g, unsigned long long step, unsigned mask, sim_err *err)
{
    if (!mask)
        return SIM_OK;
    md_sense_args a = sense_args(g);
    a.step = step;
    a.mask = mask;
    const unsigned blocks = (unsigned)(g->plan.ntx * g->plan.nty);
    const size_t sm = g->plan.smem;
    sense_kernel_of(&g->plan)<<<blocks, GPU_MD_THREADS, sm, g->stream>>>(a);
    GPU_CHECK_LAUNCH(err, g->stream);
    return SIM_OK;
}

int gpu_md_scores_at(gpu_model *g, int sp, const uint32_t *d_cells, int64_t n, int64_t *d_sums,
                     sim_err *err)
{
    if (n <= 0)
        return SIM_OK;
    md_sense_args a = sense_args(g);
    const int64_t items = n * SIM_NCAND;
    md_scores_kernel<<<(unsigned)((items + GPU_MD_EW_THREADS - 1) / GPU_MD_EW_THREADS),
                       GPU_MD_EW_THREADS, 0, g->stream>>>(g->d_params, sp, a, d_cells, n,
                                                          d_sums);
    GPU_CHECK_LAUNCH(err, g->stream);
    return SIM_OK;
}

int gpu_md_region(gpu_model *g, int r, const int32_t *d_xs, int nx, const int32_t *d_ys, int ny,
                  int64_t *d_out, sim_err *err)
{
    md_sense_args a = sense_args(g);
    const int64_t items = (int64_t)nx * ny;
    md_region_kernel<<<(unsigned)((items + GPU_MD_EW_THREADS - 1) / GPU_MD_EW_THREADS),
                       GPU_MD_EW_THREADS, 0, g->stream>>>(a, g->d_field[g->m.output_field], r,
                                                          d_xs, nx, d_ys, ny, d_out);
    GPU_CHECK_LAUNCH(err, g->stream);
    return SIM_OK;
}
