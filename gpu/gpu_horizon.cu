/* gpu_horizon.cu - horizon sums on the device (see gpu_horizon.h); agents arrive binned by tile
 * (gpu_bins.cu).
 *
 * Layers: dispatch (gpu_hz_*: plan, grid size, launch, check) -> thin kernels (hz_tile_kernel,
 * hz_naive_kernel) -> block routines (load_prefix, dense_sums, sparse_sums) -> the shared
 * arithmetic of sim_rules.h.
 *
 * Exactness: a cell is sim_fix32(field), |q| <= 2^23 (sim_rules.h). Prefix rows are kept modulo
 * 2^32 (uint32, wrapping); a row span of a disk has at most 2r + 1 <= 129 cells, under 2^31 in
 * magnitude, so the wrapped difference of two prefix entries read as int32 is the span exactly.
 * Disks of at most 255 cells (r <= 9, "small") are summed modulo 2^32 too and read as int32 at
 * the end (exact for the same reason); larger disks add their int32 spans in int64. Every
 * algorithm here (prefix spans, the dense table, the naive box loop) thus gives the CPU's int64
 * sums bit for bit. 32-bit rows halve the shared memory and the shared-memory traffic of the
 * int64 rows they replace. */
#include <atomic>
#include "gpu_backend.h"
#include "gpu_check.h"
#include "gpu_horizon.h"
#include "gpu_policy.h"

extern "C" {
#include "sim_rules.h"
#include "sim_scenario.h"
}

#define FULL_MASK 0xffffffffu

/* ------------------------------------------------------------------------------------------ */
/* Geometry and plan                                                                           */

static int round4(int v)
{
    return (v + 3) & ~3;
}

/* Region of a tile of side T at radius r: rows T + 2(r+1); a row pitch (words) of
 * L + T + (r+1) rounded up to 4, with a left margin L = round4(r + 2) (see gpu_hz_geom). */
static size_t prefix_bytes(int T, int r)
{
    size_t rows = (size_t)T + 2 * (size_t)(r + 1);
    size_t pitch = (size_t)round4(round4(r + 2) + T + r + 1);
    return rows * pitch * sizeof(uint32_t);
}

/* Lattice points of the disk of radius r: small disks (<= 255 points) sum in 32 bits. */
static int disk_points(int r)
{
    int n = 0;
    for (int dy = -r; dy <= r; dy++)
        n += 2 * sim_disk_halfwidth(r, dy) + 1;
    return n;
}

static int disk_is_small(int r)
{
    return (int64_t)disk_points(r) * SIM_FIX_CELL_MAX <= (int64_t)INT32_MAX;
}

static size_t dense_bytes(int T, int small)
{
    return (size_t)(T + 2) * (T + 2) * (small ? sizeof(uint32_t) : sizeof(int64_t));
}

void gpu_hz_geometry(int w, int h, int periodic, int r, gpu_hz_geom *g)
{
    /* The large tile halves the halo overhead; it is used while tile + halo + dense table stay
     * under ~180 KB (every r <= 62 with 32-bit rows). */
    int T = GPU_HZ_TILE_LARGE;
    if (prefix_bytes(T, r) + dense_bytes(T, disk_is_small(r)) > 180 * 1024)
        T = GPU_HZ_TILE_SMALL;
    g->w = w;
    g->h = h;
    g->periodic = periodic;
    g->r = r;
    g->T = T;
    g->R = r + 1;
    g->L = round4(r + 2);
    g->RS = T + 2 * g->R;
    g->PW = round4(g->L + T + g->R);
    g->DW = T + 2;
    /* The small kernels load rows with one float4 per lane (load_prefix): PW <= 128. */
    g->small = disk_is_small(r) && g->PW <= 128;
    g->ntx = (w + T - 1) / T;
    g->nty = (h + T - 1) / T;
    g->ntiles = g->ntx * g->nty;
}

int gpu_hz_choose_mode(const gpu_hz_geom *g, int64_t n, int forced)
{
    int dense_fits = prefix_bytes(g->T, g->r) + dense_bytes(g->T, g->small) <= GPU_HZ_SMEM_MAX;
    if (forced == GPU_HMODE_SPARSE || !dense_fits)
        return GPU_HMODE_SPARSE;
    if (forced == GPU_HMODE_DENSE)
        return GPU_HMODE_DENSE;
    double density = (double)n / ((double)g->w * (double)g->h);
    double ring = 1.0 + 2.0 / g->T;
    return density * SIM_NCAND * GPU_HZ_KAPPA > ring * ring ? GPU_HMODE_DENSE : GPU_HMODE_SPARSE;
}

/* ------------------------------------------------------------------------------------------ */
/* Block routines                                                                              */

__device__ __forceinline__ int wrap_index(int v, int n)
{
    v %= n;
    return v < 0 ? v + n : v;
}

/* The field value of region cell (i, j) (region origin (ox, oy)). Cells outside a bounded grid
 * count 0; a periodic grid wraps (as often as needed when the region is wider than the grid);
 * `inside`: the whole region lies in the grid, no wrapping or checks. */
__device__ __forceinline__ float region_value(const gpu_hz_geom &g, const float *__restrict__ field,
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
    return field[(size_t)gy * g.w + gx];
}

/* Four consecutive region cells (i, 4k .. 4k+3). With a width that is a multiple of 4 (`vec`)
 * the region origin is too (ox = tile origin - L), so the four cells are one aligned float4 of
 * one grid row, also after a periodic wrap, or all outside a bounded grid. */
__device__ __forceinline__ float4 region_group(const gpu_hz_geom &g,
                                               const float *__restrict__ field, int ox, int oy,
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
        return __ldg(reinterpret_cast<const float4 *>(field + (size_t)gy * g.w + gx));
    }
    return make_float4(region_value(g, field, ox, oy, i, 4 * k + 0, inside),
                       region_value(g, field, ox, oy, i, 4 * k + 1, inside),
                       region_value(g, field, ox, oy, i, 4 * k + 2, inside),
                       region_value(g, field, ox, oy, i, 4 * k + 3, inside));
}

/* Loads the region (RS rows of PW cells, upper-left cell (ox, oy)) as inclusive prefix rows of
 * the fixed-point field modulo 2^32: I[i*PW + j] = sum of the row's cells 0..j. Warp w owns rows
 * w, w + nw, ...; lane l holds the G groups of four cells l*G .. l*G+G-1 of a row (one or two
 * float4 loads), sums them in registers, and one warp scan of the lanes' totals gives the
 * offsets; the row is written back as uint4. GPU_HZ_LOAD_ROWS rows are requested before any is
 * used (a tile is ~100 scattered rows: latency, not bandwidth, is the cost). */
template <int G>
__device__ __forceinline__ void load_rows(uint32_t *I, const gpu_hz_geom &g,
                                          const float *__restrict__ field, int ox, int oy,
                                          bool inside, bool vec)
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
                v[q][k] = i < g.RS && grp < ng ? region_group(g, field, ox, oy, i, grp, inside, vec)
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
                uint32_t t = __shfl_up_sync(FULL_MASK, inc, o);
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

/* G = 1 while a row is at most 32 groups (PW <= 128: every small radius, T = 64 up to r = 30). */
template <bool SMALL>
__device__ void load_prefix(uint32_t *I, const gpu_hz_geom &g, const float *__restrict__ field,
                            int ox, int oy)
{
    const bool inside = ox >= 0 && oy >= 0 && ox + g.PW <= g.w && oy + g.RS <= g.h;
    const bool vec = (g.w & 3) == 0;
    if (SMALL || g.PW <= 128)
        load_rows<1>(I, g, field, ox, oy, inside, vec);
    else
        load_rows<2>(I, g, field, ox, oy, inside, vec);
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

/* Sparse mode: the 9 candidate sums of one agent at region coordinates (lx, ly), in slot order
 * (slot = (dy+1)*3 + dx+1). Row j (relative to ly, -r-1 .. r+1) serves the candidate rows
 * cy = -1, 0, 1 with disk rows d = j + 1, j, j - 1; the three candidates of a candidate row share
 * a half-width, and equal half-widths of neighbouring candidate rows reuse the spans. The
 * half-widths of a row are the previous row's shifted by one, so one table read per row. */
template <bool SMALL>
__device__ __forceinline__ void sparse_sums(const uint32_t *I, const gpu_hz_geom &g,
                                            const int *hwp, int lx, int ly, int64_t out[9])
{
    typedef hz_acc<SMALL> A;
    typename A::type s[9];
#pragma unroll
    for (int i = 0; i < 9; i++)
        s[i] = 0;
    const uint32_t *row = I + (ly - g.r - 1) * g.PW + lx;
    const int n = 2 * g.r + 3;
    int hb = hwp[1], hc = hwp[0]; /* -1: rows above the first candidate row's disk */
#pragma unroll 2
    for (int k = 1; k <= n; k++, row += g.PW) {
        const int ha = hwp[k + 1];
        uint32_t v0 = 0, v1 = 0, v2 = 0;
        int hp = -1;
        if (ha >= 0) {
            spans3(row, ha, v0, v1, v2);
            hp = ha;
            A::add(s[0], v0);
            A::add(s[1], v1);
            A::add(s[2], v2);
        }
        if (hb >= 0) {
            if (hb != hp) {
                spans3(row, hb, v0, v1, v2);
                hp = hb;
            }
            A::add(s[3], v0);
            A::add(s[4], v1);
            A::add(s[5], v2);
        }
        if (hc >= 0) {
            if (hc != hp)
                spans3(row, hc, v0, v1, v2);
            A::add(s[6], v0);
            A::add(s[7], v1);
            A::add(s[8], v2);
        }
        hc = hb;
        hb = ha;
    }
#pragma unroll
    for (int i = 0; i < 9; i++)
        out[i] = A::value(s[i]);
}

/* ------------------------------------------------------------------------------------------ */
/* Consumers: what happens to an agent's 9 sums                                               */

struct sums_out {
    int64_t *d_sums;
    __device__ void operator()(uint32_t, uint32_t id, int, int, const int64_t s[9]) const
    {
#pragma unroll
        for (int c = 0; c < SIM_NCAND; c++)
            d_sums[(size_t)id * SIM_NCAND + c] = s[c];
    }
};

struct decide_out {
    gpu_decide_args a;
    int w, h, periodic;
    /* q: the agent's place in tile order; the move kernel walks the same order, so targets and
     * keys are stored by q (coalesced) rather than by id (scattered). */
    __device__ void operator()(uint32_t q, uint32_t id, int x, int y, const int64_t s[9]) const
    {
        sim_u32x4 rr = sim_random(a.seed, *a.d_step, id, SIM_RNG_STEP);
        int c = sim_decide(s, rr, a.threshold);
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
        uint32_t target = own;
        /* The bitmap is the occupancy at the start of the step (only the move kernel changes
         * it, after this kernel); a small array, mostly read from L2. */
        if (t != own && !((__ldg(&a.d_occ[t >> 5]) >> (t & 31)) & 1u)) {
            unsigned long long key = sim_claim_key(rr, id);
            atomicMax(&a.d_claim[t], key);
            a.d_key[q] = key;
            target = t;
        }
        a.d_target[q] = target;
    }
};

/* ------------------------------------------------------------------------------------------ */
/* The tile-sum kernel                                                                         */

/* Persistent grid: each block takes tiles by the mapping (rake: a contiguous run of tiles;
 * strip-mine: every gridDim.x-th tile; dynamic: an atomic queue), skips tiles without agents,
 * builds the prefix rows I (and D in dense mode) in shared memory and serves the tile's agents,
 * one per thread. Shared memory: RS*PW uint32 (+ DW*DW uint32 or int64 dense) dynamic, plus the
 * half-width table and the agent deal (~1 KB). Requires blockDim.x == GPU_HZ_THREADS. */
template <int MODE, bool SMALL, class OUT>
__global__ void __launch_bounds__(GPU_HZ_THREADS, SMALL ? GPU_HZ_MINB_SMALL : GPU_HZ_MINB_LARGE)
hz_tile_kernel(gpu_hz_geom g, const float *__restrict__ field, const uint32_t *__restrict__ ids,
               const uint32_t *__restrict__ cells, const uint32_t *__restrict__ begin, int by_q,
               int mapping, unsigned *queue, OUT out)
{
    typedef typename hz_acc<SMALL>::type dense_t;
    extern __shared__ uint4 hz_smem[];
    __shared__ int s_hwp[2 * SIM_MAX_RADIUS + 5];
    __shared__ int s_tile;
    __shared__ int s_count[32];
    __shared__ uint16_t s_deal[GPU_HZ_THREADS]; /* dealt position -> index in the chunk */
    uint32_t *I = reinterpret_cast<uint32_t *>(hz_smem);
    dense_t *D = reinterpret_cast<dense_t *>(I + g.RS * g.PW); /* PW % 4 == 0: 16-byte aligned */
    for (int d = threadIdx.x; d <= 2 * g.r + 4; d += blockDim.x)
        s_hwp[d] = sim_disk_halfwidth(g.r, d - g.r - 2); /* -1 outside the disk */
    const int per = (g.ntiles + gridDim.x - 1) / gridDim.x;

    for (int k = 0;; k++) {
        int tile;
        if (mapping == GPU_MAP_DYNAMIC) {
            __syncthreads(); /* everyone has read the previous s_tile */
            if (threadIdx.x == 0)
                s_tile = (int)atomicAdd(queue, 1u);
            __syncthreads();
            tile = s_tile;
        } else if (mapping == GPU_MAP_BLOCK) {
            tile = k == 0 ? (int)blockIdx.x : g.ntiles;
        } else if (mapping == GPU_MAP_RAKE) {
            tile = k < per ? (int)blockIdx.x * per + k : g.ntiles;
        } else {
            tile = (int)blockIdx.x + k * (int)gridDim.x;
        }
        if (tile >= g.ntiles)
            break;
        uint32_t b0 = begin[tile], b1 = begin[tile + 1];
        if (b0 == b1)
            continue;
        const int tx0 = (tile % g.ntx) * g.T, ty0 = (tile / g.ntx) * g.T;
        const int ox = tx0 - g.L, oy = ty0 - g.R;
        load_prefix<SMALL>(I, g, field, ox, oy);
        __syncthreads();
        if (MODE == GPU_HMODE_DENSE) {
            dense_sums<SMALL>(I, D, g, s_hwp);
            __syncthreads();
        }
        /* The tile's agents, GPU_HZ_THREADS at a time, dealt to lanes by shared-memory bank:
         * every load an agent makes sits at a fixed offset from its base word (base + row *
         * pitch + column), the same offsets for all lanes of a warp, so lanes whose bases
         * differ modulo 32 (4-byte banks; 16 bank pairs for an int64 dense table) never
         * conflict. A counting sort on the bank followed by a strided deal gives each warp about
         * one agent per bank; random placement would give ~3-way conflicts. Only the thread an
         * agent lands on depends on the (atomic) order; every result is a function of the agent
         * alone. */
        const int nbank = MODE == GPU_HMODE_DENSE && !SMALL ? 16 : 32;
        for (uint32_t c0 = b0; c0 < b1; c0 += GPU_HZ_THREADS) {
            const int nc = (int)min((uint32_t)GPU_HZ_THREADS, b1 - c0);
            if (threadIdx.x < 32)
                s_count[threadIdx.x] = 0;
            __syncthreads();
            uint32_t id = 0, cell = 0;
            int bucket = 0, rank = 0;
            if ((int)threadIdx.x < nc) {
                const uint32_t q0 = c0 + threadIdx.x;
                cell = by_q ? cells[q0] : cells[ids[q0]];
                int x = (int)(cell % (uint32_t)g.w), y = (int)(cell / (uint32_t)g.w);
                bucket = (MODE == GPU_HMODE_DENSE ? (y - ty0 + 1) * g.DW + (x - tx0 + 1)
                                                  : (y - oy) * g.PW + (x - ox)) &
                         (nbank - 1);
                rank = atomicAdd(&s_count[bucket], 1);
            }
            __syncthreads();
            if (threadIdx.x == 0)
                for (int b = 0, acc = 0; b < nbank; b++) {
                    int n = s_count[b];
                    s_count[b] = acc;
                    acc += n;
                }
            __syncthreads();
            if ((int)threadIdx.x < nc)
                s_deal[s_count[bucket] + rank] = (uint16_t)threadIdx.x;
            __syncthreads();
            const int pos = (threadIdx.x & 31) * (GPU_HZ_THREADS / 32) + (threadIdx.x >> 5);
            if (pos < nc) {
                const uint32_t q = c0 + s_deal[pos]; /* cells: L1 hits by now */
                id = ids[q];
                cell = by_q ? cells[q] : cells[id];
                int x = (int)(cell % (uint32_t)g.w), y = (int)(cell / (uint32_t)g.w);
                int64_t s[SIM_NCAND];
                if (MODE == GPU_HMODE_DENSE) {
                    const dense_t *dc = D + (y - ty0 + 1) * g.DW + (x - tx0 + 1);
#pragma unroll
                    for (int c = 0; c < SIM_NCAND; c++)
                        s[c] = hz_acc<SMALL>::value(dc[sim_cand_dy(c) * g.DW + sim_cand_dx(c)]);
                } else {
                    int64_t sl[9];
                    sparse_sums<SMALL>(I, g, s_hwp, x - ox, y - oy, sl);
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
                out(q, id, x, y, s);
            }
            __syncthreads(); /* s_deal is refilled for the next chunk */
        }
        __syncthreads(); /* I and D are rebuilt for the next tile */
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Naive baseline                                                                              */

/* Thread per agent; each candidate visits its (2r+1)^2 box and keeps the offsets inside the disk.
 * Wrapping by one add/subtract when the grid is wider than the box, by modulo otherwise. */
__global__ void hz_naive_kernel(gpu_hz_geom g, const float *__restrict__ field,
                                const uint32_t *__restrict__ cells, int64_t n,
                                int64_t *__restrict__ sums)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const int r = g.r, w = g.w, h = g.h;
    const bool cheap = w > r + 1 && h > r + 1;
    int x = (int)(cells[i] % (uint32_t)w), y = (int)(cells[i] / (uint32_t)w);
    for (int c = 0; c < SIM_NCAND; c++) {
        int cx = x + sim_cand_dx(c), cy = y + sim_cand_dy(c);
        int64_t s = 0;
        if (!g.periodic && (cx < 0 || cx >= w || cy < 0 || cy >= h)) {
            s = SIM_SUM_INVALID;
        } else {
            for (int dy = -r; dy <= r; dy++) {
                int yy = cy + dy;
                if (g.periodic)
                    yy = cheap ? (yy < 0 ? yy + h : (yy >= h ? yy - h : yy)) : wrap_index(yy, h);
                else if (yy < 0 || yy >= h)
                    continue;
                const float *row = field + (size_t)yy * w;
                for (int dx = -r; dx <= r; dx++) {
                    if (dx * dx + dy * dy > r * r)
                        continue;
                    int xx = cx + dx;
                    if (g.periodic)
                        xx = cheap ? (xx < 0 ? xx + w : (xx >= w ? xx - w : xx))
                                   : wrap_index(xx, w);
                    else if (xx < 0 || xx >= w)
                        continue;
                    s += sim_fix(row[xx]);
                }
            }
        }
        sums[i * SIM_NCAND + c] = s;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Dispatch                                                                                    */

template <int MODE, bool SMALL, class OUT>
static int plan_kernel(const gpu_hz_plan *p, int optin, int *blocks_per_sm, sim_err *err)
{
    /* The limit is a property of the kernel, shared by every instance in the process: set it to
     * the device's maximum (less the kernel's static shared memory), not to this plan's need,
     * or an instance with a smaller radius made on another thread would lower it under a larger
     * one's launches (invalid argument). */
    /* Once per device (the same values every time; a race sets them twice, harmlessly). */
    static std::atomic<unsigned long long> done_on(0);
    int dev = 0;
    GPU_CHECK(err, cudaGetDevice(&dev));
    unsigned long long bit = dev < 64 ? 1ull << dev : 0;
    if (!bit || !(done_on.load() & bit)) {
        cudaFuncAttributes fa;
        GPU_CHECK(err, cudaFuncGetAttributes(&fa, hz_tile_kernel<MODE, SMALL, OUT>));
        GPU_CHECK(err, cudaFuncSetAttribute(hz_tile_kernel<MODE, SMALL, OUT>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            optin - (int)fa.sharedSizeBytes));
        /* Without this the driver may configure the smallest shared-memory carve-out that fits
         * one block, and the persistent grid sized below would run in several waves. */
        GPU_CHECK(err, cudaFuncSetAttribute(hz_tile_kernel<MODE, SMALL, OUT>,
                                            cudaFuncAttributePreferredSharedMemoryCarveout,
                                            cudaSharedmemCarveoutMaxShared));
        done_on.fetch_or(bit);
    }
    GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                       blocks_per_sm, hz_tile_kernel<MODE, SMALL, OUT>, GPU_HZ_THREADS, p->smem));
    return SIM_OK;
}

template <int MODE, bool SMALL>
static int plan_both(const gpu_hz_plan *p, int optin, int *a, int *b, sim_err *err)
{
    GPU_TRY((plan_kernel<MODE, SMALL, decide_out>(p, optin, a, err)));
    return plan_kernel<MODE, SMALL, sums_out>(p, optin, b, err);
}

int gpu_hz_plan_make(const gpu_hz_geom *g, int mode, int mapping, gpu_hz_plan *p, sim_err *err)
{
    int dev = 0, sms = 0, optin = 0;
    p->g = *g;
    p->mode = mode;
    p->mapping = mapping;
    p->smem = prefix_bytes(g->T, g->r);
    if (mode == GPU_HMODE_DENSE)
        p->smem += dense_bytes(g->T, g->small);
    GPU_CHECK(err, cudaGetDevice(&dev));
    GPU_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    GPU_CHECK(err, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (p->smem > (size_t)optin)
        return sim_err_set(err, SIM_EDEVICE,
                           "horizon radius %d needs %zu bytes of shared memory per block; this "
                           "device allows %d (try --backend cpu)",
                           g->r, p->smem, optin);
    int a = 0, b = 0;
    if (mode == GPU_HMODE_DENSE)
        GPU_TRY(g->small ? plan_both<GPU_HMODE_DENSE, true>(p, optin, &a, &b, err)
                         : plan_both<GPU_HMODE_DENSE, false>(p, optin, &a, &b, err));
    else
        GPU_TRY(g->small ? plan_both<GPU_HMODE_SPARSE, true>(p, optin, &a, &b, err)
                         : plan_both<GPU_HMODE_SPARSE, false>(p, optin, &a, &b, err));
    int per_sm = a < b ? a : b;
    if (per_sm < 1)
        per_sm = 1;
    p->per_sm = per_sm;
    /* One block per tile leaves the hand-out to the hardware scheduler (the baseline the three
     * persistent mappings are compared with). */
    p->blocks = mapping == GPU_MAP_BLOCK ? g->ntiles : per_sm * sms;
    return SIM_OK;
}

template <int MODE, bool SMALL, class OUT>
static int launch_tiles(const gpu_hz_plan *p, const gpu_hz_agents *ag, const float *d_field,
                        unsigned *d_queue, int queue_zeroed, OUT out, cudaStream_t s,
                        sim_err *err)
{
    if (p->mapping == GPU_MAP_DYNAMIC && !queue_zeroed)
        GPU_CHECK(err, cudaMemsetAsync(d_queue, 0, sizeof(unsigned), s));
    hz_tile_kernel<MODE, SMALL, OUT><<<p->blocks, GPU_HZ_THREADS, p->smem, s>>>(
        p->g, d_field, ag->ids, ag->cells, ag->begin, ag->by_q, p->mapping, d_queue, out);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

template <class OUT>
static int launch_any(const gpu_hz_plan *p, const gpu_hz_agents *ag, const float *d_field,
                      unsigned *d_queue, int queue_zeroed, OUT out, cudaStream_t s, sim_err *err)
{
    if (p->mode == GPU_HMODE_DENSE)
        return p->g.small ? launch_tiles<GPU_HMODE_DENSE, true>(p, ag, d_field, d_queue,
                                                                queue_zeroed, out, s, err)
                          : launch_tiles<GPU_HMODE_DENSE, false>(p, ag, d_field, d_queue,
                                                                 queue_zeroed, out, s, err);
    return p->g.small ? launch_tiles<GPU_HMODE_SPARSE, true>(p, ag, d_field, d_queue,
                                                             queue_zeroed, out, s, err)
                      : launch_tiles<GPU_HMODE_SPARSE, false>(p, ag, d_field, d_queue,
                                                              queue_zeroed, out, s, err);
}

gpu_hz_agents gpu_hz_agents_of(const gpu_bins *b, const uint32_t *d_cells)
{
    gpu_hz_agents ag;
    ag.ids = b->d_id_out;
    ag.begin = b->d_begin;
    ag.cells = d_cells;
    ag.by_q = 0;
    return ag;
}

int gpu_hz_decide(const gpu_hz_plan *p, const gpu_hz_agents *ag, const float *d_field,
                  const gpu_decide_args *a, unsigned *d_queue, cudaStream_t s, sim_err *err)
{
    decide_out out;
    out.a = *a;
    out.w = p->g.w;
    out.h = p->g.h;
    out.periodic = p->g.periodic;
    return launch_any(p, ag, d_field, d_queue, a->queue_zeroed, out, s, err);
}

int gpu_hz_sums(const gpu_hz_plan *p, const gpu_bins *b, const float *d_field,
                const uint32_t *d_cells, int64_t *d_sums, unsigned *d_queue, cudaStream_t s,
                sim_err *err)
{
    sums_out out;
    out.d_sums = d_sums;
    const gpu_hz_agents ag = gpu_hz_agents_of(b, d_cells);
    return launch_any(p, &ag, d_field, d_queue, 0, out, s, err);
}

int gpu_hz_naive(const gpu_hz_geom *g, const float *d_field, const uint32_t *d_cells, int64_t n,
                 int64_t *d_sums, cudaStream_t s, sim_err *err)
{
    if (n <= 0)
        return SIM_OK;
    unsigned blocks = (unsigned)((n + 127) / 128);
    hz_naive_kernel<<<blocks, 128, 0, s>>>(*g, d_field, d_cells, n, d_sums);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}
