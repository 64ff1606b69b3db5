/* gpu_horizon.cu - horizon sums on the device (see gpu_horizon.h).
 *
 * Layers: dispatch (gpu_hz_*: plan, grid size, launch, check) -> thin kernels (hz_tile_kernel,
 * hz_keys_kernel, hz_starts_kernel, hz_naive_kernel) -> block routines (load_prefix,
 * dense_sums, sparse_sums) -> the shared arithmetic of sim_rules.h.
 *
 * Exactness: every sum is an int64 sum of sim_fix(field), so prefix differences, the dense table
 * and the naive box loop give the same bits in any order. Prefix rows can hold at most
 * RS * 2^48 < 2^57 and a disk at most ~2^62 (sim_rules.h), so nothing overflows. */
#include <cub/block/block_adjacent_difference.cuh>
#include <cub/device/device_radix_sort.cuh>

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

static size_t prefix_bytes(int T, int r)
{
    size_t rs = (size_t)T + 2 * (size_t)(r + 1);
    return rs * (rs + 1) * sizeof(int64_t);
}

static size_t dense_bytes(int T)
{
    return (size_t)(T + 2) * (T + 2) * sizeof(int64_t);
}

void gpu_hz_geometry(int w, int h, int periodic, int r, gpu_hz_geom *g)
{
    /* The large tile halves the halo overhead; it is used while tile + halo + dense table stay
     * under ~180 KB, so that r <= 32 keeps 64 x 64 tiles. */
    int T = GPU_HZ_TILE_LARGE;
    if (prefix_bytes(T, r) + dense_bytes(T) > 180 * 1024)
        T = GPU_HZ_TILE_SMALL;
    g->w = w;
    g->h = h;
    g->periodic = periodic;
    g->r = r;
    g->T = T;
    g->R = r + 1;
    g->RS = T + 2 * g->R;
    g->PW = g->RS + 1;
    g->DW = T + 2;
    g->ntx = (w + T - 1) / T;
    g->nty = (h + T - 1) / T;
    g->ntiles = g->ntx * g->nty;
}

int gpu_hz_choose_mode(const gpu_hz_geom *g, int64_t n, int forced)
{
    int dense_fits = prefix_bytes(g->T, g->r) + dense_bytes(g->T) <= GPU_HZ_SMEM_MAX;
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

/* The fixed-point value of region cell (i, j) (region origin (ox, oy)). Cells outside a bounded
 * grid count 0; a periodic grid wraps (as often as needed when the region is wider than the
 * grid); `inside`: the whole region lies in the grid, no wrapping or checks. */
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

/* Loads the region of side RS whose upper-left cell is (ox, oy) as fixed-point values and turns
 * each row into exclusive prefix sums: P[i*PW + j] = sum of the row's first j cells.
 * Warp w owns rows w, w + nw, ...: first it loads them GPU_HZ_LOAD_ROWS rows at a time, every
 * value of the batch requested before any is used (a tile is a few thousand scattered 128-byte
 * rows: latency, not bandwidth, is the cost), then it scans its own rows in place, 32 columns
 * per round with the carry from lane 31. Only the warp's own rows are touched: __syncwarp. */
#define HZ_MAX_CHUNKS 7 /* ceil(RS / 32) for RS <= 224 (RS <= 194 here) */
__device__ void load_prefix(int64_t *P, const gpu_hz_geom &g, const float *__restrict__ field,
                            int ox, int oy)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    const bool inside = ox >= 0 && oy >= 0 && ox + g.RS <= g.w && oy + g.RS <= g.h;
    for (int i0 = warp; i0 < g.RS; i0 += GPU_HZ_LOAD_ROWS * nw) {
        float v[GPU_HZ_LOAD_ROWS][HZ_MAX_CHUNKS];
#pragma unroll
        for (int q = 0; q < GPU_HZ_LOAD_ROWS; q++)
#pragma unroll
            for (int ch = 0; ch < HZ_MAX_CHUNKS; ch++) {
                int i = i0 + q * nw, j = ch * 32 + lane;
                v[q][ch] = i < g.RS && j < g.RS ? region_value(g, field, ox, oy, i, j, inside)
                                                : 0.0f;
            }
#pragma unroll
        for (int q = 0; q < GPU_HZ_LOAD_ROWS; q++)
#pragma unroll
            for (int ch = 0; ch < HZ_MAX_CHUNKS; ch++) {
                int i = i0 + q * nw, j = ch * 32 + lane;
                if (i < g.RS && j < g.RS)
                    P[i * g.PW + j + 1] = sim_fix(v[q][ch]);
            }
    }
    __syncwarp();
    for (int i = warp; i < g.RS; i += nw) {
        int64_t *prow = P + i * g.PW;
        if (lane == 0)
            prow[0] = 0;
        int64_t carry = 0;
        for (int j0 = 0; j0 < g.RS; j0 += 32) {
            int j = j0 + lane;
            int64_t v = j < g.RS ? prow[j + 1] : 0;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                int64_t t = __shfl_up_sync(FULL_MASK, v, o);
                if (lane >= o)
                    v += t;
            }
            v += carry;
            if (j < g.RS)
                prow[j + 1] = v;
            carry = __shfl_sync(FULL_MASK, v, 31);
        }
    }
}

/* Dense mode: the disk sum of every cell of the tile plus a ring of one, into D[DW][DW]. A
 * thread takes three vertically adjacent cells of one column: they share the P rows, and where
 * two of them need the same half-width on a row the row segment is loaded once. Threads of a
 * warp walk the same relative rows, so the half-width branches are uniform and consecutive
 * lanes read consecutive columns (no bank conflicts). */
__device__ void dense_sums(const int64_t *P, int64_t *D, const gpu_hz_geom &g, const int *hw)
{
    const int r = g.r, DW = g.DW, ntrip = (DW + 2) / 3;
    for (int item = threadIdx.x; item < DW * ntrip; item += blockDim.x) {
        int col = item % DW, y0 = (item / DW) * 3;
        int ks = DW - y0 < 3 ? DW - y0 : 3;
        const int64_t *base = P + (g.R - 1 + y0) * g.PW + (g.R - 1 + col);
        int64_t s0 = 0, s1 = 0, s2 = 0;
        for (int u = -r; u <= r + ks - 1; u++) {
            const int64_t *row = base + u * g.PW;
            int h0 = u <= r ? hw[u + r] : -1;
            int h1 = ks > 1 && u - 1 >= -r && u - 1 <= r ? hw[u - 1 + r] : -1;
            int h2 = ks > 2 && u - 2 >= -r ? hw[u - 2 + r] : -1;
            int64_t v = 0;
            if (h0 >= 0) {
                v = row[h0 + 1] - row[-h0];
                s0 += v;
            }
            if (h1 >= 0) {
                if (h1 != h0)
                    v = row[h1 + 1] - row[-h1];
                s1 += v;
            }
            if (h2 >= 0) {
                if (h2 != h1)
                    v = row[h2 + 1] - row[-h2];
                s2 += v;
            }
        }
        D[y0 * DW + col] = s0;
        if (ks > 1)
            D[(y0 + 1) * DW + col] = s1;
        if (ks > 2)
            D[(y0 + 2) * DW + col] = s2;
    }
}

/* Sparse mode: the 9 candidate sums of one agent at region coordinates (lx, ly), in slot order
 * (slot = (dy+1)*3 + dx+1). Each of the 2r+3 rows serves up to three candidate rows; the three
 * candidates of one candidate row share a half-width, and equal half-widths of neighbouring
 * candidate rows reuse the loaded segments. */
__device__ void sparse_sums(const int64_t *P, const gpu_hz_geom &g, const int *hw, int lx, int ly,
                            int64_t sl[9])
{
    const int r = g.r;
#pragma unroll
    for (int i = 0; i < 9; i++)
        sl[i] = 0;
    for (int j = -r - 1; j <= r + 1; j++) {
        const int64_t *row = P + (ly + j) * g.PW + lx;
        int hp = -1;
        int64_t v0 = 0, v1 = 0, v2 = 0;
#pragma unroll
        for (int cy = -1; cy <= 1; cy++) {
            int d = j - cy;
            if (d < -r || d > r)
                continue;
            int h = hw[d + r];
            if (h != hp) {
                v0 = row[h] - row[-1 - h];
                v1 = row[h + 1] - row[-h];
                v2 = row[h + 2] - row[1 - h];
                hp = h;
            }
            sl[(cy + 1) * 3 + 0] += v0;
            sl[(cy + 1) * 3 + 1] += v1;
            sl[(cy + 1) * 3 + 2] += v2;
        }
    }
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
        /* A claim word of UINT64_MAX marks a cell occupied at the start of the step (only the
         * move kernel writes that value, after this kernel), so this is the "empty" test. */
        if (t != own && a.d_claim[t] != ~0ull) {
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
 * builds P (and D in dense mode) in shared memory and serves the tile's agents, one per thread.
 * Shared memory: RS*PW int64 (+ DW*DW int64 dense) dynamic, plus the half-width table and the
 * agent deal (3 KB). Requires blockDim.x == GPU_HZ_THREADS. */
template <int MODE, class OUT>
__global__ void __launch_bounds__(GPU_HZ_THREADS)
hz_tile_kernel(gpu_hz_geom g, const float *__restrict__ field, const uint32_t *__restrict__ ids,
               const uint32_t *__restrict__ cells, const uint32_t *__restrict__ begin,
               int mapping, unsigned *queue, OUT out)
{
    extern __shared__ int64_t smem[];
    __shared__ int s_hw[2 * SIM_MAX_RADIUS + 1];
    __shared__ int s_tile;
    __shared__ int s_count[16];
    __shared__ uint32_t s_id[GPU_HZ_THREADS], s_cell[GPU_HZ_THREADS], s_q[GPU_HZ_THREADS];
    int64_t *P = smem;
    int64_t *D = smem + g.RS * g.PW;
    for (int d = threadIdx.x; d <= 2 * g.r; d += blockDim.x)
        s_hw[d] = sim_disk_halfwidth(g.r, d - g.r);
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
        const int ox = tx0 - g.R, oy = ty0 - g.R;
        load_prefix(P, g, field, ox, oy);
        __syncthreads();
        if (MODE == GPU_HMODE_DENSE) {
            dense_sums(P, D, g, s_hw);
            __syncthreads();
        }
        /* The tile's agents, GPU_HZ_THREADS at a time, dealt to lanes by shared-memory bank:
         * every load an agent makes sits at a fixed offset from its base word (base + row *
         * pitch + column), the same offsets for all lanes of a warp, so lanes whose bases
         * differ modulo 16 (8-byte bank pairs) never conflict. A counting sort on base % 16
         * followed by a strided deal gives each warp about two agents per bank pair; random
         * placement would give ~5-way conflicts. Only the thread an agent lands on depends on
         * the (atomic) order; every result is a function of the agent alone. */
        for (uint32_t c0 = b0; c0 < b1; c0 += GPU_HZ_THREADS) {
            const int nc = (int)min((uint32_t)GPU_HZ_THREADS, b1 - c0);
            if (threadIdx.x < 16)
                s_count[threadIdx.x] = 0;
            __syncthreads();
            uint32_t id = 0, cell = 0;
            int bucket = 0, rank = 0;
            if ((int)threadIdx.x < nc) {
                id = ids[c0 + threadIdx.x];
                cell = cells[id];
                int x = (int)(cell % (uint32_t)g.w), y = (int)(cell / (uint32_t)g.w);
                bucket = MODE == GPU_HMODE_DENSE ? ((y - ty0 + 1) * g.DW + (x - tx0 + 1)) & 15
                                                 : ((y - oy) * g.PW + (x - ox)) & 15;
                rank = atomicAdd(&s_count[bucket], 1);
            }
            __syncthreads();
            if (threadIdx.x == 0)
                for (int b = 0, acc = 0; b < 16; b++) {
                    int n = s_count[b];
                    s_count[b] = acc;
                    acc += n;
                }
            __syncthreads();
            if ((int)threadIdx.x < nc) {
                int pos = s_count[bucket] + rank;
                s_id[pos] = id;
                s_cell[pos] = cell;
                s_q[pos] = c0 + threadIdx.x;
            }
            __syncthreads();
            const int pos = (threadIdx.x & 31) * (GPU_HZ_THREADS / 32) + (threadIdx.x >> 5);
            if (pos < nc) {
                id = s_id[pos];
                cell = s_cell[pos];
                int x = (int)(cell % (uint32_t)g.w), y = (int)(cell / (uint32_t)g.w);
                int64_t s[SIM_NCAND];
                if (MODE == GPU_HMODE_DENSE) {
                    const int64_t *dc = D + (y - ty0 + 1) * g.DW + (x - tx0 + 1);
#pragma unroll
                    for (int c = 0; c < SIM_NCAND; c++)
                        s[c] = dc[sim_cand_dy(c) * g.DW + sim_cand_dx(c)];
                } else {
                    int64_t sl[9];
                    sparse_sums(P, g, s_hw, x - ox, y - oy, sl);
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
                out(s_q[pos], id, x, y, s);
            }
            __syncthreads(); /* s_id and friends are refilled for the next chunk */
        }
        __syncthreads(); /* P and D are rebuilt for the next tile */
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Binning kernels                                                                             */

/* Thread per agent: its tile key and its id. */
__global__ void hz_keys_kernel(const uint32_t *__restrict__ cells, int64_t n, int w, int T,
                               int ntx, uint32_t *__restrict__ keys, uint32_t *__restrict__ ids)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t c = cells[i];
    uint32_t x = c % (uint32_t)w, y = c / (uint32_t)w;
    keys[i] = (y / (uint32_t)T) * (uint32_t)ntx + x / (uint32_t)T;
    ids[i] = (uint32_t)i;
}

typedef cub::BlockAdjacentDifference<uint32_t, GPU_BIN_THREADS> bin_adj;

struct key_step {
    __device__ uint32_t operator()(uint32_t cur, uint32_t prev) const
    {
        return cur - prev;
    }
};

/* Run starts of the sorted keys: where key[i] - key[i-1] > 0 (a block adjacent difference,
 * seed 002), tiles key[i-1]+1 .. key[i] start at i. Index n carries the sentinel key ntiles,
 * which closes the last run: begin[ntiles] = n. Every begin entry is written exactly once. */
__global__ void __launch_bounds__(GPU_BIN_THREADS)
hz_starts_kernel(const uint32_t *__restrict__ keys, int64_t n, int ntiles, uint32_t *begin)
{
    __shared__ typename bin_adj::TempStorage tmp;
    const int64_t base = (int64_t)blockIdx.x * GPU_BIN_THREADS * GPU_BIN_ITEMS;
    uint32_t k[GPU_BIN_ITEMS], d[GPU_BIN_ITEMS];
#pragma unroll
    for (int j = 0; j < GPU_BIN_ITEMS; j++) {
        int64_t i = base + (int64_t)threadIdx.x * GPU_BIN_ITEMS + j;
        k[j] = i < n ? keys[i] : (uint32_t)ntiles;
    }
    uint32_t pred = base > 0 ? keys[base - 1] : 0u;
    bin_adj(tmp).SubtractLeft(k, d, key_step(), pred);
#pragma unroll
    for (int j = 0; j < GPU_BIN_ITEMS; j++) {
        int64_t i = base + (int64_t)threadIdx.x * GPU_BIN_ITEMS + j;
        if (i > n)
            continue;
        int64_t first = i == 0 ? 0 : (int64_t)(k[j] - d[j]) + 1;
        for (int64_t t = first; t <= (int64_t)k[j]; t++)
            begin[t] = (uint32_t)i;
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

template <int MODE, class OUT>
static int plan_kernel(const gpu_hz_plan *p, int *blocks_per_sm, sim_err *err)
{
    GPU_CHECK(err, cudaFuncSetAttribute(hz_tile_kernel<MODE, OUT>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)p->smem));
    /* Without this the driver may configure the smallest shared-memory carve-out that fits one
     * block, and the persistent grid sized below would run in several waves. */
    GPU_CHECK(err, cudaFuncSetAttribute(hz_tile_kernel<MODE, OUT>,
                                        cudaFuncAttributePreferredSharedMemoryCarveout,
                                        cudaSharedmemCarveoutMaxShared));
    GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                       blocks_per_sm, hz_tile_kernel<MODE, OUT>, GPU_HZ_THREADS, p->smem));
    return SIM_OK;
}

int gpu_hz_plan_make(const gpu_hz_geom *g, int mode, int mapping, gpu_hz_plan *p, sim_err *err)
{
    int dev = 0, sms = 0, optin = 0;
    p->g = *g;
    p->mode = mode;
    p->mapping = mapping;
    p->smem = prefix_bytes(g->T, g->r) + (mode == GPU_HMODE_DENSE ? dense_bytes(g->T) : 0);
    GPU_CHECK(err, cudaGetDevice(&dev));
    GPU_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    GPU_CHECK(err, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (p->smem > (size_t)optin)
        return sim_err_set(err, SIM_EDEVICE,
                           "horizon radius %d needs %zu bytes of shared memory per block; this "
                           "device allows %d (try --backend cpu)",
                           g->r, p->smem, optin);
    int a = 0, b = 0;
    if (mode == GPU_HMODE_DENSE) {
        GPU_TRY(plan_kernel<GPU_HMODE_DENSE, decide_out>(p, &a, err));
        GPU_TRY(plan_kernel<GPU_HMODE_DENSE, sums_out>(p, &b, err));
    } else {
        GPU_TRY(plan_kernel<GPU_HMODE_SPARSE, decide_out>(p, &a, err));
        GPU_TRY(plan_kernel<GPU_HMODE_SPARSE, sums_out>(p, &b, err));
    }
    int per_sm = a < b ? a : b;
    if (per_sm < 1)
        per_sm = 1;
    p->per_sm = per_sm;
    /* One block per tile leaves the hand-out to the hardware scheduler (the baseline the three
     * persistent mappings are compared with). */
    p->blocks = mapping == GPU_MAP_BLOCK ? g->ntiles : per_sm * sms;
    return SIM_OK;
}

size_t gpu_bins_bytes(int64_t cap, int ntiles)
{
    size_t temp = 0;
    if (cap > 0 &&
        cub::DeviceRadixSort::SortPairs(NULL, temp, (const uint32_t *)NULL, (uint32_t *)NULL,
                                        (const uint32_t *)NULL, (uint32_t *)NULL, (int)cap, 0,
                                        32) != cudaSuccess)
        temp = (size_t)cap * 8 + (1u << 20); /* no device to ask: a generous bound */
    return (size_t)cap * 4 * sizeof(uint32_t) + ((size_t)ntiles + 1) * sizeof(uint32_t) + temp;
}

int gpu_bins_alloc(gpu_bins *b, int64_t cap, int ntiles, sim_err *err)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
    b->ntiles = ntiles;
    b->key_bits = 1;
    while ((1ll << b->key_bits) < (long long)ntiles)
        b->key_bits++;
    if (cap <= 0)
        return SIM_OK;
    size_t n4 = (size_t)cap * sizeof(uint32_t);
    GPU_CHECK(err, cudaMalloc(&b->d_key_in, n4));
    GPU_CHECK(err, cudaMalloc(&b->d_key_out, n4));
    GPU_CHECK(err, cudaMalloc(&b->d_id_in, n4));
    GPU_CHECK(err, cudaMalloc(&b->d_id_out, n4));
    GPU_CHECK(err, cudaMalloc(&b->d_begin, ((size_t)ntiles + 1) * sizeof(uint32_t)));
    GPU_CHECK(err, cub::DeviceRadixSort::SortPairs(NULL, b->temp_bytes, b->d_key_in, b->d_key_out,
                                                   b->d_id_in, b->d_id_out, (int)cap, 0,
                                                   b->key_bits));
    GPU_CHECK(err, cudaMalloc(&b->d_temp, b->temp_bytes));
    return SIM_OK;
}

void gpu_bins_free(gpu_bins *b)
{
    cudaFree(b->d_key_in);
    cudaFree(b->d_key_out);
    cudaFree(b->d_id_in);
    cudaFree(b->d_id_out);
    cudaFree(b->d_begin);
    cudaFree(b->d_temp);
    memset(b, 0, sizeof *b);
}

int gpu_bins_build(gpu_bins *b, const gpu_hz_geom *g, const uint32_t *d_cells, int64_t n,
                   cudaStream_t s, sim_err *err)
{
    if (n <= 0 || n > b->cap)
        return sim_err_set(err, SIM_EINVAL, "binning %lld agents with room for %lld",
                           (long long)n, (long long)b->cap);
    unsigned blocks = (unsigned)((n + GPU_BIN_THREADS - 1) / GPU_BIN_THREADS);
    hz_keys_kernel<<<blocks, GPU_BIN_THREADS, 0, s>>>(d_cells, n, g->w, g->T, g->ntx, b->d_key_in,
                                                     b->d_id_in);
    GPU_CHECK_LAUNCH(err, s);
    size_t temp = b->temp_bytes;
    GPU_CHECK(err, cub::DeviceRadixSort::SortPairs(b->d_temp, temp, b->d_key_in, b->d_key_out,
                                                   b->d_id_in, b->d_id_out, (int)n, 0,
                                                   b->key_bits, s));
    const int64_t per = (int64_t)GPU_BIN_THREADS * GPU_BIN_ITEMS;
    unsigned sblocks = (unsigned)((n + 1 + per - 1) / per); /* n + 1 items: the sentinel too */
    hz_starts_kernel<<<sblocks, GPU_BIN_THREADS, 0, s>>>(b->d_key_out, n, g->ntiles, b->d_begin);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

template <int MODE, class OUT>
static int launch_tiles(const gpu_hz_plan *p, const gpu_bins *b, const float *d_field,
                        const uint32_t *d_cells, unsigned *d_queue, OUT out, cudaStream_t s,
                        sim_err *err)
{
    if (p->mapping == GPU_MAP_DYNAMIC)
        GPU_CHECK(err, cudaMemsetAsync(d_queue, 0, sizeof(unsigned), s));
    hz_tile_kernel<MODE, OUT><<<p->blocks, GPU_HZ_THREADS, p->smem, s>>>(
        p->g, d_field, b->d_id_out, d_cells, b->d_begin, p->mapping, d_queue, out);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

int gpu_hz_decide(const gpu_hz_plan *p, const gpu_bins *b, const float *d_field,
                  const uint32_t *d_cells, const gpu_decide_args *a, unsigned *d_queue,
                  cudaStream_t s, sim_err *err)
{
    decide_out out;
    out.a = *a;
    out.w = p->g.w;
    out.h = p->g.h;
    out.periodic = p->g.periodic;
    if (p->mode == GPU_HMODE_DENSE)
        return launch_tiles<GPU_HMODE_DENSE>(p, b, d_field, d_cells, d_queue, out, s, err);
    return launch_tiles<GPU_HMODE_SPARSE>(p, b, d_field, d_cells, d_queue, out, s, err);
}

int gpu_hz_sums(const gpu_hz_plan *p, const gpu_bins *b, const float *d_field,
                const uint32_t *d_cells, int64_t *d_sums, unsigned *d_queue, cudaStream_t s,
                sim_err *err)
{
    sums_out out;
    out.d_sums = d_sums;
    if (p->mode == GPU_HMODE_DENSE)
        return launch_tiles<GPU_HMODE_DENSE>(p, b, d_field, d_cells, d_queue, out, s, err);
    return launch_tiles<GPU_HMODE_SPARSE>(p, b, d_field, d_cells, d_queue, out, s, err);
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
