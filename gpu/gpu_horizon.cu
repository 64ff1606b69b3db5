/* gpu_horizon.cu - horizon sums on the device (see gpu_horizon.h); agents arrive binned by tile
 * (gpu_bins.cu).
 *
 * Layers: dispatch (gpu_hz_*: plan, grid size, launch, check) -> thin kernels (hz_tile_kernel;
 * for the SELL mapping hz_sell_order_kernel and hz_slice_kernel; hz_naive_kernel) -> block
 * routines (gpu_horizon_block.cuh: load a tile, serve its agents; gpu_horizon_sell.cuh: order
 * the tiles, take and load a slice) -> thread helpers (gpu_horizon_block.cuh: prefix rows,
 * dense and sparse sums) -> the shared arithmetic of sim_rules.h.
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
#include <stdlib.h>
#include <string.h>
#include "gpu_backend.h"
#include "gpu_check.h"
#include "gpu_horizon.h"
#include "gpu_horizon_block.cuh"
#include "gpu_horizon_sell.cuh"
#include "gpu_pdl.cuh"
#include "gpu_policy.h"

extern "C" {
#include "sim_rules.h"
#include "sim_scenario.h"
}

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
    /* A small world would leave most multiprocessors idle (64^2 is one tile of 64, 512^2 64
     * tiles): halve the tile until there are GPU_HZ_TILES_WANT of them, down to
     * GPU_HZ_TILE_MIN. HORIZON_HZ_TILE=16|32|64 fixes the side (a measuring aid). */
    const char *forced = getenv("HORIZON_HZ_TILE");
    const int ft = forced ? atoi(forced) : 0;
    if (ft == 16 || ft == 32 || ft == 64) {
        T = ft;
    } else {
        while (T > GPU_HZ_TILE_MIN &&
               (int64_t)((w + T - 1) / T) * ((h + T - 1) / T) < GPU_HZ_TILES_WANT)
            T /= 2;
    }
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

void gpu_hz_geometry_whole(int w, int h, int periodic, int r, gpu_hz_geom *g)
{
    g->w = w;
    g->h = h;
    g->periodic = periodic;
    g->r = r;
    g->T = w > h ? w : h;
    g->R = r + 1;
    g->L = round4(r + 2);
    g->RS = h + 2 * g->R;
    g->PW = round4(g->L + w + g->R);
    g->DW = 0; /* no dense table */
    g->small = disk_is_small(r) && g->PW <= 128;
    g->ntx = g->nty = g->ntiles = 1;
}

int gpu_hz_auto_mapping(int *mapping, sim_err *err)
{
    *mapping = GPU_HZ_MAPPING;
    const char *forced = getenv("HORIZON_HZ_MAPPING"); /* a measuring aid; empty: unset */
    if (!forced || !*forced)
        return SIM_OK;
    char *end = NULL;
    const long v = strtol(forced, &end, 10);
    if (*end != '\0' || v < GPU_MAP_RAKE || v > GPU_MAP_SELL)
        return sim_err_set(err, SIM_EINVAL,
                           "HORIZON_HZ_MAPPING=%s: allowed 1..%d (rake, strip-mine, dynamic, "
                           "block per tile, sell)", forced, GPU_MAP_SELL);
    *mapping = (int)v;
    return SIM_OK;
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
/* Consumers: what happens to an agent's 9 sums                                               */

struct sums_out {
    int64_t *d_sums;
    int pdl() const { return 0; }
    __device__ void operator()(uint32_t, uint32_t id, int, int, const int64_t s[9]) const
    {
#pragma unroll
        for (int c = 0; c < SIM_NCAND; c++)
            d_sums[(size_t)id * SIM_NCAND + c] = s[c];
    }
};

/* decide_out (gpu_hz_decide_out, gpu_horizon_block.cuh) reads the occupancy through the
 * read-only cache: nothing writes it during this kernel. */
typedef gpu_hz_decide_out<true> decide_out;

/* ------------------------------------------------------------------------------------------ */
/* The tile-sum kernel                                                                         */

/* Persistent grid: each block takes tiles by the mapping (rake: a contiguous run of tiles;
 * strip-mine: every gridDim.x-th tile; dynamic: an atomic queue; block: one tile per block; SELL
 * runs hz_slice_kernel instead),
 * skips tiles without agents, and for each of the others loads the tile (gpu_hz_block_load) and
 * serves its agents, one per thread (gpu_hz_block_serve). Shared memory: RS*PW uint32 (+ DW*DW
 * uint32 or int64 dense) dynamic, plus the half-width table and the agent deal (~1 KB); see
 * gpu_horizon_block.cuh. Requires blockDim.x == GPU_HZ_THREADS. */
template <int MODE, bool SMALL, class OUT, bool MANY = false, int RC = 0>
__global__ void __launch_bounds__(GPU_HZ_THREADS, !SMALL ? GPU_HZ_MINB_LARGE
                                                  : MANY ? GPU_HZ_MINB_MANY : GPU_HZ_MINB_SMALL)
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
    gpu_hz_block_halfwidths(s_hwp, g.r);
    gpu_pdl_wait(); /* the field, bins and queue of the kernels before (gpu_pdl.cuh) */
    gpu_pdl_release();
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
        const gpu_hz_tile t = gpu_hz_tile_at(g, tile);
        gpu_hz_block_load<MODE, SMALL>(I, D, g, field, s_hwp, t);
        gpu_hz_block_serve<MODE, SMALL, OUT, RC>(I, D, g, s_hwp, t, ids, cells, by_q, b0, b1,
                                                 s_count, s_deal, out);
        __syncthreads(); /* I and D are rebuilt for the next tile */
    }
}

/* SELL-C-sigma (gpu_horizon_sell.cuh): the slice order of a launch, a block of
 * GPU_HZ_SELL_SIGMA threads per window of tiles (gpu_hz_block_sell_order). Shared memory:
 * SIGMA counts. */
__global__ void __launch_bounds__(GPU_HZ_SELL_SIGMA)
hz_sell_order_kernel(const uint32_t *__restrict__ begin, int ntiles, uint32_t *__restrict__ order)
{
    __shared__ uint32_t s_counts[GPU_HZ_SELL_SIGMA];
    gpu_hz_block_sell_order(begin, ntiles, order, s_counts);
}

/* SELL-C-sigma, sparse mode: a persistent grid whose blocks take slices (GPU_HZ_SELL_C
 * consecutive tiles of `order`) from the atomic queue, load the slice's regions side by side
 * (gpu_hz_block_load_slice) and serve its agents together, one per thread, GPU_HZ_THREADS at a
 * time (gpu_hz_block_serve_items): rounds run full across the slice's tiles, and each agent's
 * sums come from its own tile's region as in hz_tile_kernel. Shared memory: C*RS*PW uint32
 * dynamic, plus the half-width table, the agent deal and the slice (~1.3 KB). The launch
 * bounds of hz_tile_kernel: a thread's work per agent is the same. Requires blockDim.x ==
 * GPU_HZ_THREADS. */
template <bool SMALL, class OUT>
__global__ void __launch_bounds__(GPU_HZ_THREADS, SMALL ? GPU_HZ_MINB_SMALL : GPU_HZ_MINB_LARGE)
hz_slice_kernel(gpu_hz_geom g, const float *__restrict__ field, const uint32_t *__restrict__ ids,
                const uint32_t *__restrict__ cells, const uint32_t *__restrict__ begin,
                const uint32_t *__restrict__ order, int by_q, unsigned *queue, OUT out)
{
    typedef typename hz_acc<SMALL>::type dense_t;
    extern __shared__ uint4 hz_smem[];
    __shared__ int s_hwp[2 * SIM_MAX_RADIUS + 5];
    __shared__ int s_count[32];
    __shared__ uint16_t s_deal[GPU_HZ_THREADS]; /* dealt position -> index in the chunk */
    __shared__ gpu_hz_slice s_slice;
    uint32_t *I = reinterpret_cast<uint32_t *>(hz_smem);
    const dense_t *no_table = NULL; /* sparse mode reads the prefix rows only */
    gpu_hz_block_halfwidths(s_hwp, g.r);
    const unsigned nslices = (unsigned)gpu_hz_sell_slices(g.ntiles);
    gpu_hz_slice_items items;
    items.s = &s_slice;
    items.region_words = g.RS * g.PW;

    for (;;) {
        __syncthreads(); /* everyone has read the previous slice; publishes hwp the first time */
        if (gpu_hz_block_next_slice(s_slice, g, order, begin, queue) >= nslices)
            break;
        const uint32_t n = gpu_hz_slice_agents(s_slice);
        if (n == 0)
            continue; /* a slice of empty tiles (sorted last in their window) */
        gpu_hz_block_load_slice<SMALL>(I, g, field, s_slice);
        gpu_hz_block_serve_items<GPU_HMODE_SPARSE, SMALL>(I, no_table, g, s_hwp, items, n, ids,
                                                          cells, by_q, s_count, s_deal, out);
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

/* Kernel fn's shared-memory settings, once per device (done_on: a bit per device, one set per
 * kernel instance), and its resident blocks per multiprocessor at p->smem. */
static int plan_kernel(const void *fn, std::atomic<unsigned long long> &done_on,
                       const gpu_hz_plan *p, int optin, int *blocks_per_sm, sim_err *err)
{
    /* The limit is a property of the kernel, shared by every instance in the process: set it to
     * the device's maximum (less the kernel's static shared memory), not to this plan's need,
     * or an instance with a smaller radius made on another thread would lower it under a larger
     * one's launches (invalid argument). */
    /* Once per device (the same values every time; a race sets them twice, harmlessly). */
    int dev = 0;
    GPU_CHECK(err, cudaGetDevice(&dev));
    unsigned long long bit = dev < 64 ? 1ull << dev : 0;
    if (!bit || !(done_on.load() & bit)) {
        cudaFuncAttributes fa;
        GPU_CHECK(err, cudaFuncGetAttributes(&fa, fn));
        GPU_CHECK(err, cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            optin - (int)fa.sharedSizeBytes));
        /* Without this the driver may configure the smallest shared-memory carve-out that fits
         * one block, and the persistent grid sized below would run in several waves. */
        GPU_CHECK(err, cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                            cudaSharedmemCarveoutMaxShared));
        done_on.fetch_or(bit);
    }
    GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, fn,
                                                                 GPU_HZ_THREADS, p->smem));
    return SIM_OK;
}

template <int MODE, bool SMALL, class OUT, bool MANY, int RC>
static int plan_tile_instance(const gpu_hz_plan *p, int optin, int *blocks_per_sm, sim_err *err)
{
    static std::atomic<unsigned long long> done_on(0);
    return plan_kernel((const void *)hz_tile_kernel<MODE, SMALL, OUT, MANY, RC>, done_on, p,
                       optin, blocks_per_sm, err);
}

/* The tile kernel's MANY and RC arguments as a type, for with_tile_instance's callers. */
template <bool M, int R> struct tile_args {
    static constexpr bool many = M;
    static constexpr int rc = R;
};

/* f(tile_args<MANY, RC>{}) for the instance of hz_tile_kernel<MODE, SMALL, OUT, MANY, RC> that
 * plan p launches: MANY only with small disks (the others are the same), the compiled-in
 * radius (p->rc) only in sparse mode with small disks. The plan and the launch both choose
 * through it. */
template <int MODE, bool SMALL, class F>
static int with_tile_instance(const gpu_hz_plan *p, F &&f)
{
    if constexpr (MODE == GPU_HMODE_SPARSE && SMALL) {
        if (p->rc == GPU_HZ_RC)
            return p->many ? f(tile_args<true, GPU_HZ_RC>{}) : f(tile_args<false, GPU_HZ_RC>{});
    }
    return SMALL && p->many ? f(tile_args<SMALL, 0>{}) : f(tile_args<false, 0>{});
}

template <int MODE, bool SMALL, class OUT>
static int plan_tile_kernel(const gpu_hz_plan *p, int optin, int *blocks_per_sm, sim_err *err)
{
    return with_tile_instance<MODE, SMALL>(p, [&](auto i) -> int {
        return plan_tile_instance<MODE, SMALL, OUT, decltype(i)::many, decltype(i)::rc>(
            p, optin, blocks_per_sm, err);
    });
}

template <bool SMALL, class OUT>
static int plan_slice_kernel(const gpu_hz_plan *p, int optin, int *blocks_per_sm, sim_err *err)
{
    static std::atomic<unsigned long long> done_on(0);
    return plan_kernel((const void *)hz_slice_kernel<SMALL, OUT>, done_on, p, optin,
                       blocks_per_sm, err);
}

/* Both consumers' instances of the kernel the plan's mapping launches (SELL: sparse mode). */
template <int MODE, bool SMALL>
static int plan_both(const gpu_hz_plan *p, int optin, int *a, int *b, sim_err *err)
{
    if (p->mapping == GPU_MAP_SELL) {
        GPU_TRY((plan_slice_kernel<SMALL, decide_out>(p, optin, a, err)));
        return plan_slice_kernel<SMALL, sums_out>(p, optin, b, err);
    }
    GPU_TRY((plan_tile_kernel<MODE, SMALL, decide_out>(p, optin, a, err)));
    return plan_tile_kernel<MODE, SMALL, sums_out>(p, optin, b, err);
}

/* Whether the SELL mapping can run plan p: sparse mode (a dense table per tile would multiply
 * too), and a slice's GPU_HZ_SELL_C regions within GPU_HZ_SMEM_MAX and the device's limit, less
 * the slice kernel's static shared memory (the same for both consumers). */
static int sell_fits(const gpu_hz_plan *p, int optin, int *fits, sim_err *err)
{
    *fits = 0;
    if (p->mode != GPU_HMODE_SPARSE)
        return SIM_OK;
    cudaFuncAttributes fa;
    const void *fn = p->g.small ? (const void *)hz_slice_kernel<true, decide_out>
                                : (const void *)hz_slice_kernel<false, decide_out>;
    GPU_CHECK(err, cudaFuncGetAttributes(&fa, fn));
    const size_t limit = (size_t)(optin < GPU_HZ_SMEM_MAX ? optin : GPU_HZ_SMEM_MAX);
    *fits = GPU_HZ_SELL_C * p->tile_smem + fa.sharedSizeBytes <= limit;
    return SIM_OK;
}

int gpu_hz_rc_enabled(int *on, sim_err *err)
{
    *on = 1;
    return gpu_env_switch("HORIZON_HZ_RC", on, err); /* a measuring aid: 0 turns it off */
}

int gpu_hz_plan_make(const gpu_hz_geom *g, int mode, int mapping, gpu_hz_plan *p, sim_err *err)
{
    int dev = 0, sms = 0, optin = 0;
    p->g = *g;
    p->mode = mode;
    p->tile_smem = prefix_bytes(g->T, g->r);
    if (mode == GPU_HMODE_DENSE)
        p->tile_smem += dense_bytes(g->T, g->small);
    GPU_CHECK(err, cudaGetDevice(&dev));
    GPU_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    GPU_CHECK(err, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (p->tile_smem > (size_t)optin)
        return sim_err_set(err, SIM_EDEVICE,
                           "horizon radius %d needs %zu bytes of shared memory per block; this "
                           "device allows %d (try --backend cpu)",
                           g->r, p->tile_smem, optin);
    if (mapping == GPU_MAP_SELL) {
        int fits = 0;
        GPU_TRY(sell_fits(p, optin, &fits, err));
        if (!fits)
            mapping = GPU_MAP_DYNAMIC; /* the queue of tiles, one region a block */
    }
    p->mapping = mapping;
    p->many = g->small && g->ntiles >= GPU_HZ_MANY_TILES;
    int rc_on = 1;
    GPU_TRY(gpu_hz_rc_enabled(&rc_on, err));
    p->rc = rc_on && mode == GPU_HMODE_SPARSE && mapping != GPU_MAP_SELL &&
                    g->small && g->r == GPU_HZ_RC
                ? GPU_HZ_RC
                : 0;
    p->smem = mapping == GPU_MAP_SELL ? GPU_HZ_SELL_C * p->tile_smem : p->tile_smem;
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
    /* One block per tile leaves the hand-out to the hardware scheduler (the baseline the
     * persistent mappings are compared with). A persistent grid has no more blocks than units
     * of work (tiles, or SELL's slices): in a small world (64^2: one tile, 512^2: 64) the blocks
     * beyond them would only start, contend for the queue's atomic and leave, microseconds of
     * every step. */
    const int units = mapping == GPU_MAP_SELL ? gpu_hz_sell_slices(g->ntiles) : g->ntiles;
    p->blocks = mapping == GPU_MAP_BLOCK || units < per_sm * sms ? units : per_sm * sms;
    if (p->blocks < 1)
        p->blocks = 1;
    return SIM_OK;
}

template <int MODE, bool SMALL, class OUT>
static int launch_tiles(const gpu_hz_plan *p, const gpu_hz_agents *ag, const float *d_field,
                        unsigned *d_queue, int queue_zeroed, OUT out, cudaStream_t s,
                        sim_err *err)
{
    if (p->mapping == GPU_MAP_DYNAMIC && !queue_zeroed)
        GPU_CHECK(err, cudaMemsetAsync(d_queue, 0, sizeof(unsigned), s));
    GPU_TRY(with_tile_instance<MODE, SMALL>(p, [&](auto i) -> int {
        GPU_CHECK(err, gpu_launch(out.pdl(),
                                  hz_tile_kernel<MODE, SMALL, OUT, decltype(i)::many,
                                                 decltype(i)::rc>,
                                  p->blocks, GPU_HZ_THREADS, p->smem, s, p->g, d_field, ag->ids,
                                  ag->cells, ag->begin, ag->by_q, p->mapping, d_queue, out));
        return SIM_OK;
    }));
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

/* The SELL mapping's launches (sparse mode): the slice order of these bins into ag->order, then
 * the slices, on the same stream. */
template <bool SMALL, class OUT>
static int launch_slices(const gpu_hz_plan *p, const gpu_hz_agents *ag, const float *d_field,
                         unsigned *d_queue, int queue_zeroed, OUT out, cudaStream_t s,
                         sim_err *err)
{
    if (!queue_zeroed)
        GPU_CHECK(err, cudaMemsetAsync(d_queue, 0, sizeof(unsigned), s));
    const int windows = (p->g.ntiles + GPU_HZ_SELL_SIGMA - 1) / GPU_HZ_SELL_SIGMA;
    hz_sell_order_kernel<<<windows, GPU_HZ_SELL_SIGMA, 0, s>>>(ag->begin, p->g.ntiles,
                                                               ag->order);
    GPU_CHECK_LAUNCH(err, s);
    hz_slice_kernel<SMALL, OUT><<<p->blocks, GPU_HZ_THREADS, p->smem, s>>>(
        p->g, d_field, ag->ids, ag->cells, ag->begin, ag->order, ag->by_q, d_queue, out);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

template <class OUT>
static int launch_any(const gpu_hz_plan *p, const gpu_hz_agents *ag, const float *d_field,
                      unsigned *d_queue, int queue_zeroed, OUT out, cudaStream_t s, sim_err *err)
{
    if (p->mapping == GPU_MAP_SELL) /* sparse mode only (gpu_hz_plan_make) */
        return p->g.small ? launch_slices<true>(p, ag, d_field, d_queue, queue_zeroed, out, s, err)
                          : launch_slices<false>(p, ag, d_field, d_queue, queue_zeroed, out, s,
                                                 err);
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
    ag.order = b->d_order;
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
