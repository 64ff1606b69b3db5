/* gpu_horizon_block.cuh - the block-level routines of the tile-sum kernel (gpu_horizon.cu): the
 * work one thread block does for one tile, and the thread-level helpers under them. Included by
 * gpu_horizon.cu and gpu_step_resident.cu (CUDA C++; device code). Arithmetic and exactness:
 * see gpu_horizon.cu.
 *
 * A block of GPU_HZ_THREADS threads serves one tile of side T at a time:
 *   gpu_hz_block_halfwidths  the disk's half-width table, once per block (hwp);
 *   gpu_hz_block_load        the region (tile + halo) as prefix rows I, and in dense mode the
 *                            disk sums D of the tile plus a ring of one, in shared memory;
 *   gpu_hz_block_serve       the tile's agents, dealt to threads by shared-memory bank, each
 *                            thread computing one agent's 9 sums (gpu_hz_block_agent_sums) and
 *                            handing them to the consumer (gpu_hz_decide_out in a step): the
 *                            one-tile case of gpu_hz_block_serve_items, which also serves the
 *                            agents of several tiles loaded side by side (a SELL slice,
 *                            gpu_horizon_sell.cuh).
 * Shared memory a block needs (the kernel declares it and passes it in):
 *   dynamic: I = RS*PW uint32, then in dense mode D = DW*DW uint32 (small) or int64 (PW % 4 == 0,
 *            so D is 16-byte aligned); gpu_hz_plan.tile_smem bytes;
 *   static:  hwp int[2*SIM_MAX_RADIUS + 5], count int[32], deal uint16[GPU_HZ_THREADS] (~1 KB).
 * Synchronisation: every routine that writes shared memory ends with the __syncthreads that
 * publishes it, except gpu_hz_block_halfwidths (the first barrier of gpu_hz_block_load
 * publishes hwp) and gpu_hz_block_serve, whose caller syncs before I and D are rebuilt. */
#ifndef GPU_HORIZON_BLOCK_CUH
#define GPU_HORIZON_BLOCK_CUH

#include <stdint.h>

#include "gpu_backend.h"
#include "gpu_disk_sums.cuh"
#include "gpu_horizon.h"
#include "gpu_policy.h"

extern "C" {
#include "sim_rules.h"
#include "sim_scenario.h"
}

/* ---- Thread-level helpers: region loads, accumulators, spans ---- */

__device__ __forceinline__ int wrap_index(int v, int n)
{
    v %= n;
    return v < 0 ? v + n : v;
}

/* The field value of region cell (i, j) (region origin (ox, oy)). Cells outside a bounded grid
 * count 0; a periodic grid wraps (as often as needed when the region is wider than the grid);
 * `inside`: the whole region lies in the grid, no wrapping or checks. */
template <bool NC>
__device__ __forceinline__ float region_value(const gpu_hz_geom &g, const float *field,
                                              int ox, int oy, int i, int j, bool inside)
{
    int gx = ox + j, gy = oy + i;
    if (!inside) {
        if (g.periodic) {
            gx = wrap_index(gx, g.w);
            gy = wrap_index(gy, g.h);
        } else if (gx < 0 || gx >= g.w || gy < 0 || gy >= g.h) {
            return 0.0f;
        }
    }
    const float *p = field + (size_t)gy * g.w + gx;
    return NC ? __ldg(p) : *p;
}

/* Four consecutive region cells (i, 4k .. 4k+3). With a width that is a multiple of 4 (`vec`)
 * the region origin is too (ox = tile origin - L), so the four cells are one aligned float4 of
 * one grid row, also after a periodic wrap, or all outside a bounded grid. NC: through the
 * read-only cache (__ldg), for a kernel during which the field does not change; a kernel that
 * writes the field between its own tile loads (gpu_step_resident.cu) reads it coherently. */
template <bool NC>
__device__ __forceinline__ float4 region_group(const gpu_hz_geom &g,
                                               const float *field, int ox, int oy,
                                               int i, int k, bool inside, bool vec)
{
    if (vec) {
        int gx = ox + 4 * k, gy = oy + i;
        if (!inside) {
            if (g.periodic) {
                gx = wrap_index(gx, g.w);
                gy = wrap_index(gy, g.h);
            } else if (gx < 0 || gx >= g.w || gy < 0 || gy >= g.h) {
                return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            }
        }
        const float4 *p = reinterpret_cast<const float4 *>(field + (size_t)gy * g.w + gx);
        return NC ? __ldg(p) : *p;
    }
    return make_float4(region_value<NC>(g, field, ox, oy, i, 4 * k + 0, inside),
                       region_value<NC>(g, field, ox, oy, i, 4 * k + 1, inside),
                       region_value<NC>(g, field, ox, oy, i, 4 * k + 2, inside),
                       region_value<NC>(g, field, ox, oy, i, 4 * k + 3, inside));
}

/* The region's groups of four cells from the field in device memory (region_group), the tile
 * kernels' loader for load_rows. */
template <bool NC> struct hz_region_groups {
    const gpu_hz_geom &g;
    const float *field;
    int ox, oy;
    bool inside, vec;
    __device__ __forceinline__ float4 operator()(int i, int k) const
    {
        return region_group<NC>(g, field, ox, oy, i, k, inside, vec);
    }
};

/* Builds the region (RS rows of PW cells) as inclusive prefix rows of the fixed-point field
 * modulo 2^32: I[i*PW + j] = sum of the row's cells 0..j; group(i, k) gives the region cells
 * (i, 4k .. 4k+3). Warp w owns rows w, w + nw, ...; lane l holds the G groups of four cells
 * l*G .. l*G+G-1 of a row (one or two float4 loads), sums them in registers, and one warp scan
 * of the lanes' totals gives the offsets; the row is written back as uint4. GPU_HZ_LOAD_ROWS
 * rows are requested before any is used (a tile is ~100 scattered rows: latency, not bandwidth,
 * is the cost). */
template <int G, class GROUP>
__device__ __forceinline__ void load_rows(uint32_t *I, const gpu_hz_geom &g, const GROUP &group)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const int ng = g.PW >> 2;
    for (int i0 = warp; i0 < g.RS; i0 += GPU_HZ_LOAD_ROWS * nw) {
        float4 v[GPU_HZ_LOAD_ROWS][G];
#pragma unroll
        for (int q = 0; q < GPU_HZ_LOAD_ROWS; q++)
#pragma unroll
            for (int k = 0; k < G; k++) {
                const int i = i0 + q * nw, grp = lane * G + k;
                v[q][k] = i < g.RS && grp < ng ? group(i, grp)
                                               : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            }
#pragma unroll
        for (int q = 0; q < GPU_HZ_LOAD_ROWS; q++) {
            const int i = i0 + q * nw;
            if (i >= g.RS)
                break; /* uniform across the warp */
            uint32_t s[4 * G];
#pragma unroll
            for (int k = 0; k < G; k++) {
                s[4 * k + 0] = (uint32_t)sim_fix32(v[q][k].x);
                s[4 * k + 1] = (uint32_t)sim_fix32(v[q][k].y);
                s[4 * k + 2] = (uint32_t)sim_fix32(v[q][k].z);
                s[4 * k + 3] = (uint32_t)sim_fix32(v[q][k].w);
            }
#pragma unroll
            for (int e = 1; e < 4 * G; e++)
                s[e] += s[e - 1];
            const uint32_t total = s[4 * G - 1];
            uint32_t inc = total;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                uint32_t t = __shfl_up_sync(0xffffffffu, inc, o);
                if (lane >= o)
                    inc += t;
            }
            const uint32_t base = inc - total;
            uint4 *row = reinterpret_cast<uint4 *>(I + i * g.PW);
#pragma unroll
            for (int k = 0; k < G; k++)
                if (lane * G + k < ng)
                    row[lane * G + k] = make_uint4(s[4 * k] + base, s[4 * k + 1] + base,
                                                   s[4 * k + 2] + base, s[4 * k + 3] + base);
        }
    }
}

/* load_rows with the groups a lane holds: G = 1 while a row is at most 32 groups (PW <= 128:
 * every small radius, T = 64 up to r = 30), else 2. */
template <bool SMALL, class GROUP>
__device__ __forceinline__ void load_region(uint32_t *I, const gpu_hz_geom &g, const GROUP &group)
{
    if (SMALL || g.PW <= 128)
        load_rows<1>(I, g, group);
    else
        load_rows<2>(I, g, group);
}

/* The region of upper-left cell (ox, oy) from the field in device memory. */
template <bool SMALL, bool NC>
__device__ void load_prefix(uint32_t *I, const gpu_hz_geom &g, const float *field,
                            int ox, int oy)
{
    const bool inside = ox >= 0 && oy >= 0 && ox + g.PW <= g.w && oy + g.RS <= g.h;
    const hz_region_groups<NC> group = {g, field, ox, oy, inside, (g.w & 3) == 0};
    load_region<SMALL>(I, g, group);
}

/* Accumulators: small disks sum modulo 2^32 (exact, see the top), larger ones in int64. */
template <bool SMALL> struct hz_acc {
    typedef int64_t type;
    __device__ static __forceinline__ void add(int64_t &a, uint32_t span)
    {
        a += (int64_t)(int32_t)span;
    }
    __device__ static __forceinline__ int64_t value(int64_t a)
    {
        return a;
    }
};
template <> struct hz_acc<true> {
    typedef uint32_t type;
    __device__ static __forceinline__ void add(uint32_t &a, uint32_t span)
    {
        a += span;
    }
    __device__ static __forceinline__ int64_t value(uint32_t a)
    {
        return (int64_t)(int32_t)a;
    }
};

/* Dense mode: the disk sum of every cell of the tile plus a ring of one, into D[DW][DW]. A
 * thread takes three vertically adjacent cells of one column: they share the prefix rows, and
 * where two of them need the same half-width on a row the span is loaded once. Threads of a
 * warp walk the same relative rows, so the half-width branches are uniform and consecutive
 * lanes read consecutive columns (no bank conflicts). hwp: half-widths padded with -1
 * (hwp[d + r + 2] = half-width of disk row d, -1 for |d| > r). */
template <bool SMALL>
__device__ void dense_sums(const uint32_t *I, typename hz_acc<SMALL>::type *D, const gpu_hz_geom &g,
                           const int *hwp)
{
    typedef hz_acc<SMALL> A;
    const int r = g.r, DW = g.DW, ntrip = (DW + 2) / 3;
    for (int item = threadIdx.x; item < DW * ntrip; item += blockDim.x) {
        const int col = item % DW, y0 = (item / DW) * 3;
        const int ks = DW - y0 < 3 ? DW - y0 : 3;
        /* D cell (y0, col) is region cell (R - 1 + y0, L - 1 + col). */
        const uint32_t *row = I + (g.R - 1 + y0 - r) * g.PW + (g.L - 1 + col);
        typename A::type s0 = 0, s1 = 0, s2 = 0;
#pragma unroll 2
        for (int u = -r; u <= r + ks - 1; u++, row += g.PW) {
            const int h0 = hwp[u + r + 2];
            const int h1 = ks > 1 ? hwp[u + r + 1] : -1;
            const int h2 = ks > 2 ? hwp[u + r] : -1;
            uint32_t v = 0;
            if (h0 >= 0) {
                v = row[h0] - row[-h0 - 1];
                A::add(s0, v);
            }
            if (h1 >= 0) {
                if (h1 != h0)
                    v = row[h1] - row[-h1 - 1];
                A::add(s1, v);
            }
            if (h2 >= 0) {
                if (h2 != h1)
                    v = row[h2] - row[-h2 - 1];
                A::add(s2, v);
            }
        }
        D[y0 * DW + col] = s0;
        if (ks > 1)
            D[(y0 + 1) * DW + col] = s1;
        if (ks > 2)
            D[(y0 + 2) * DW + col] = s2;
    }
}

/* The spans of half-width h centred one column left of, at and right of the column `row`
 * points at: three differences of six prefix entries. */
__device__ __forceinline__ void spans3(const uint32_t *row, int h, uint32_t &v0, uint32_t &v1,
                                       uint32_t &v2)
{
    const uint32_t *hi = row + h, *lo = row - h;
    v0 = hi[-1] - lo[-2];
    v1 = hi[0] - lo[-1];
    v2 = hi[1] - lo[0];
}

/* The fast path's prefix rows for disk_sums9: 32-bit entries modulo 2^32, spans as their
 * differences, accumulated by hz_acc<SMALL>. */
template <bool SMALL> struct hz_sparse {
    typedef uint32_t row_t;
    typedef uint32_t span_t;
    typedef typename hz_acc<SMALL>::type acc_t;
    __device__ static __forceinline__ void spans3(const uint32_t *row, int h, uint32_t &v0,
                                                  uint32_t &v1, uint32_t &v2)
    {
        ::spans3(row, h, v0, v1, v2);
    }
    __device__ static __forceinline__ void add(acc_t &a, uint32_t span)
    {
        hz_acc<SMALL>::add(a, span);
    }
    __device__ static __forceinline__ int64_t value(acc_t a)
    {
        return hz_acc<SMALL>::value(a);
    }
};

/* Sparse mode: the 9 candidate sums of one agent at region coordinates (lx, ly) (disk_sums9). */
template <bool SMALL>
__device__ __forceinline__ void sparse_sums(const uint32_t *I, const gpu_hz_geom &g,
                                            const int *hwp, int lx, int ly, int64_t out[9])
{
    disk_sums9<hz_sparse<SMALL>>(I, g, hwp, lx, ly, out);
}

/* sparse_sums for a radius RC known at compile time (g.r == RC): the same sums. */
template <bool SMALL, int RC>
__device__ __forceinline__ void sparse_sums_c(const uint32_t *I, const gpu_hz_geom &g, int lx,
                                              int ly, int64_t out[9])
{
    disk_sums9_c<hz_sparse<SMALL>, RC>(I, g, lx, ly, out);
}

/* ---- Block routines: one tile ---- */

/* A tile's origin in the grid (tx0, ty0) and its region's upper-left cell (ox, oy). */
typedef struct gpu_hz_tile {
    int tx0, ty0, ox, oy;
} gpu_hz_tile;

__device__ __forceinline__ gpu_hz_tile gpu_hz_tile_at(const gpu_hz_geom &g, int tile)
{
    gpu_hz_tile t;
    t.tx0 = (tile % g.ntx) * g.T;
    t.ty0 = (tile / g.ntx) * g.T;
    t.ox = t.tx0 - g.L;
    t.oy = t.ty0 - g.R;
    return t;
}

/* hwp[d] = half-width of disk row d - r - 2, -1 outside the disk (d = 0 .. 2r + 4); threads
 * stride over the table. Not followed by a barrier: gpu_hz_block_load's first one publishes it. */
__device__ __forceinline__ void gpu_hz_block_halfwidths(int *hwp, int r)
{
    for (int d = threadIdx.x; d <= 2 * r + 4; d += blockDim.x)
        hwp[d] = sim_disk_halfwidth(r, d - r - 2); /* -1 outside the disk */
}

/* Builds tile t's prefix rows I (every warp loads rows, see load_rows) and in dense mode the
 * disk sums D (threads over column triples, see dense_sums); returns when both are visible to
 * the whole block (one barrier after each). NC: see region_group. */
template <int MODE, bool SMALL, bool NC = true>
__device__ __forceinline__ void gpu_hz_block_load(uint32_t *I, typename hz_acc<SMALL>::type *D,
                                                  const gpu_hz_geom &g,
                                                  const float *field, const int *hwp,
                                                  const gpu_hz_tile &t)
{
    load_prefix<SMALL, NC>(I, g, field, t.ox, t.oy);
    __syncthreads();
    if (MODE == GPU_HMODE_DENSE) {
        dense_sums<SMALL>(I, D, g, hwp);
        __syncthreads();
    }
}

/* The candidate sums s[c] (candidate order of sim_rules.h) of the agent at grid cell (x, y) of
 * tile t, from D (dense) or the prefix rows (sparse); candidates off a bounded grid get
 * SIM_SUM_INVALID. One thread, no barrier. */
template <int MODE, bool SMALL, int RC = 0>
__device__ __forceinline__ void gpu_hz_block_agent_sums(const uint32_t *I,
                                                        const typename hz_acc<SMALL>::type *D,
                                                        const gpu_hz_geom &g, const int *hwp,
                                                        const gpu_hz_tile &t, int x, int y,
                                                        int64_t s[SIM_NCAND])
{
    typedef typename hz_acc<SMALL>::type dense_t;
    if (MODE == GPU_HMODE_DENSE) {
        const dense_t *dc = D + (y - t.ty0 + 1) * g.DW + (x - t.tx0 + 1);
#pragma unroll
        for (int c = 0; c < SIM_NCAND; c++)
            s[c] = hz_acc<SMALL>::value(dc[sim_cand_dy(c) * g.DW + sim_cand_dx(c)]);
    } else {
        int64_t sl[9];
        if constexpr (RC > 0)
            sparse_sums_c<SMALL, RC>(I, g, x - t.ox, y - t.oy, sl);
        else
            sparse_sums<SMALL>(I, g, hwp, x - t.ox, y - t.oy, sl);
#pragma unroll
        for (int c = 0; c < SIM_NCAND; c++)
            s[c] = sl[sim_cand_slot(c)];
    }
    if (!g.periodic) {
#pragma unroll
        for (int c = 0; c < SIM_NCAND; c++) {
            int cx = x + sim_cand_dx(c), cy = y + sim_cand_dy(c);
            if (cx < 0 || cx >= g.w || cy < 0 || cy >= g.h)
                s[c] = SIM_SUM_INVALID;
        }
    }
}

/* One agent of a block's work: its place q in tile order, its tile t, and the word offset `at`
 * of that tile's region (prefix rows) in the block's dynamic shared memory. */
typedef struct gpu_hz_item {
    uint32_t q;
    int at;
    gpu_hz_tile t;
} gpu_hz_item;

/* Serves the n items of a block's work: items(j) (j < n) names item j (gpu_hz_item), whose
 * tile's region (and dense table) are loaded; out(q, id, x, y, sums) for each. One tile's agents
 * (gpu_hz_block_serve) or a SELL slice's (gpu_horizon_sell.cuh). Thread mapping: the items go
 * GPU_HZ_THREADS at a time, dealt to lanes by shared-memory bank: every load an agent makes sits
 * at a fixed offset from its base word (its region's offset + row * pitch + column), the same
 * offsets for all lanes of a warp, so lanes whose bases differ modulo 32 (4-byte banks; 16 bank
 * pairs for an int64 dense table) never conflict. A counting sort on the bank (count[32])
 * followed by a strided deal (deal[GPU_HZ_THREADS]) gives each warp about one agent per bank;
 * random placement would give ~3-way conflicts. Only the thread an agent lands on depends on the
 * (atomic) order; every result is a function of the agent alone. Ends after a barrier (deal may
 * be refilled); the caller syncs before I and D are rebuilt. Requires blockDim.x ==
 * GPU_HZ_THREADS. */
template <int MODE, bool SMALL, class ITEMS, class OUT, int RC = 0>
__device__ __forceinline__ void
gpu_hz_block_serve_items(const uint32_t *I, const typename hz_acc<SMALL>::type *D,
                         const gpu_hz_geom &g, const int *hwp, const ITEMS &items, uint32_t n,
                         const uint32_t *ids, const uint32_t *cells, int by_q, int *count,
                         uint16_t *deal, const OUT &out)
{
    const int nbank = MODE == GPU_HMODE_DENSE && !SMALL ? 16 : 32;
    for (uint32_t c0 = 0; c0 < n; c0 += GPU_HZ_THREADS) {
        const int nc = (int)min((uint32_t)GPU_HZ_THREADS, n - c0);
        if (threadIdx.x < 32)
            count[threadIdx.x] = 0;
        __syncthreads();
        uint32_t id = 0, cell = 0;
        int bucket = 0, rank = 0;
        if ((int)threadIdx.x < nc) {
            const gpu_hz_item it = items(c0 + threadIdx.x);
            cell = by_q ? cells[it.q] : cells[ids[it.q]];
            int x = (int)(cell % (uint32_t)g.w), y = (int)(cell / (uint32_t)g.w);
            bucket = (MODE == GPU_HMODE_DENSE
                          ? (y - it.t.ty0 + 1) * g.DW + (x - it.t.tx0 + 1)
                          : it.at + (y - it.t.oy) * g.PW + (x - it.t.ox)) &
                     (nbank - 1);
            rank = atomicAdd(&count[bucket], 1);
        }
        __syncthreads();
        if (threadIdx.x == 0)
            for (int b = 0, acc = 0; b < nbank; b++) {
                int k = count[b];
                count[b] = acc;
                acc += k;
            }
        __syncthreads();
        if ((int)threadIdx.x < nc)
            deal[count[bucket] + rank] = (uint16_t)threadIdx.x;
        __syncthreads();
        const int pos = (threadIdx.x & 31) * (GPU_HZ_THREADS / 32) + (threadIdx.x >> 5);
        if (pos < nc) {
            const gpu_hz_item it = items(c0 + deal[pos]);
            id = ids[it.q];
            cell = by_q ? cells[it.q] : cells[id]; /* cells: L1 hits by now */
            int x = (int)(cell % (uint32_t)g.w), y = (int)(cell / (uint32_t)g.w);
            int64_t s[SIM_NCAND];
            gpu_hz_block_agent_sums<MODE, SMALL, RC>(I + it.at, D, g, hwp, it.t, x, y, s);
            out(it.q, id, x, y, s);
        }
        __syncthreads(); /* deal is refilled for the next chunk */
    }
}

/* Item j of one tile's agents: agent b0 + j of tile t, whose region starts the shared memory. */
struct gpu_hz_tile_items {
    gpu_hz_tile t;
    uint32_t b0;
    __device__ __forceinline__ gpu_hz_item operator()(uint32_t j) const
    {
        gpu_hz_item it;
        it.q = b0 + j;
        it.at = 0;
        it.t = t;
        return it;
    }
};

/* Serves the agents b0 .. b1 - 1 (tile order q) of tile t, whose I (and D) are loaded:
 * gpu_hz_block_serve_items over them (thread mapping, banks and barriers there). */
template <int MODE, bool SMALL, class OUT, int RC = 0>
__device__ __forceinline__ void
gpu_hz_block_serve(const uint32_t *I, const typename hz_acc<SMALL>::type *D, const gpu_hz_geom &g,
                   const int *hwp, const gpu_hz_tile &t, const uint32_t *ids,
                   const uint32_t *cells, int by_q, uint32_t b0, uint32_t b1,
                   int *count, uint16_t *deal, const OUT &out)
{
    gpu_hz_tile_items items;
    items.t = t;
    items.b0 = b0;
    gpu_hz_block_serve_items<MODE, SMALL, gpu_hz_tile_items, OUT, RC>(
        I, D, g, hwp, items, b1 - b0, ids, cells, by_q, count, deal, out);
}

/* ---- The decide consumer: what happens to an agent's 9 sums in a step ---- */

/* Decide and claim (DESIGN.md's step 2 and the claim of step 3) for agent `id` at grid cell
 * (x, y) of a w x h grid, its sums s from the step's field: sim_decide picks a candidate; an
 * empty target (occ: the occupancy bitmap at the start of the step) is claimed by a 64-bit
 * atomicMax of the agent's key into claim[target], and *key gets the key. Returns the target,
 * or the agent's own cell when it claimed nothing (*key untouched). The pointers may be global
 * (the step's kernels) or shared memory (the one-block kernel, gpu_step_resident.cu). NC: the
 * occupancy through the read-only cache, for a kernel during which it does not change (see
 * region_group). */
template <bool NC>
__device__ __forceinline__ uint32_t gpu_hz_decide_claim(uint64_t seed, unsigned long long step,
                                                        uint64_t threshold, const uint32_t *occ,
                                                        unsigned long long *claim, uint32_t id,
                                                        int x, int y, int w, int h, int periodic,
                                                        const int64_t s[9],
                                                        unsigned long long *key)
{
    sim_u32x4 rr = sim_random(seed, step, id, SIM_RNG_STEP);
    int c = sim_decide(s, rr, threshold);
    int tx = x + sim_cand_dx(c), ty = y + sim_cand_dy(c);
    uint32_t own = (uint32_t)y * (uint32_t)w + (uint32_t)x;
    uint32_t t = own;
    if (periodic) {
        tx = tx < 0 ? tx + w : (tx >= w ? tx - w : tx);
        ty = ty < 0 ? ty + h : (ty >= h ? ty - h : ty);
        t = (uint32_t)ty * (uint32_t)w + (uint32_t)tx;
    } else if (tx >= 0 && tx < w && ty >= 0 && ty < h) {
        t = (uint32_t)ty * (uint32_t)w + (uint32_t)tx;
    }
    const uint32_t *ow = &occ[t >> 5];
    if (t == own || (((NC ? __ldg(ow) : *ow) >> (t & 31)) & 1u))
        return own;
    *key = sim_claim_key(rr, id);
    atomicMax(&claim[t], *key);
    return t;
}

/* The consumer of the tile-sum kernel in a step: gpu_hz_decide_claim, the target and key stored
 * by q, the agent's place in tile order (the move walks the same order, so they are stored by q,
 * coalesced, rather than by id, scattered). */
template <bool NC> struct gpu_hz_decide_out {
    gpu_decide_args a;
    int w, h, periodic;
    int pdl() const { return a.pdl; }
    __device__ void operator()(uint32_t q, uint32_t id, int x, int y, const int64_t s[9]) const
    {
        a.d_target[q] = gpu_hz_decide_claim<NC>(a.seed, *a.d_step, a.threshold, a.d_occ,
                                                a.d_claim, id, x, y, w, h, periodic, s,
                                                &a.d_key[q]);
    }
};

#endif
