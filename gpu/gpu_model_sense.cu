/* gpu_model_sense.cu - phases 1-2 of a model step on the device (sense, decide, claim) for every
 * species in one tile kernel, and the direct disk sums behind the viewer's and tests' reads.
 *
 * Why one combined grid per species: a species' score at a cell is the sum over its sense terms
 * of weight * (disk sum of the source), and by linearity that is the disk sum of ONE grid, the
 * per-cell sum of weight * source (sim_fix32 of a field, SIM_OCC_FIX for an agent of the sensed
 * species, 0 on walls). sim_model_cpu.c builds that grid and its prefix rows over the whole
 * world; here a block builds it for its tile plus a halo of R = max radius + 1 (the candidates
 * sit one cell off the agent) in shared memory, straight from the fields and the cell codes, so
 * the grid never goes to device memory: one read of each sensed field and of the 1-byte codes
 * per step (plus the halo), whatever the number of species.
 *
 * Exactness: the sums are integers. With `wide` off every row span of every species is under
 * 2^31 in magnitude ((2r+1) * sum |weight| * max |source| < 2^31), so prefix rows kept modulo
 * 2^32 give each span exactly and the spans add in int64; otherwise the rows are int64. Either
 * way each candidate gets the bits of sim_model_cpu.c's disk_sum, in any order.
 *
 * Thread mapping of md_sense_kernel: one block of GPU_MD_THREADS per T x T tile. The block loads
 * the region's codes (RS x RW bytes; a warp per row, a lane per column), then per species: the
 * combined score and its prefix rows in one pass, a warp per region row, 32 columns at a time (a
 * lane sums its cell's terms, a shuffle scan adds them up; a first version with one strided pass
 * per term and a division per cell took 0.67 ms on wolf-sheep-grass at 4096^2, this one 0.61:
 * gpu/BENCH.md, "Models", says where the rest goes); then the
 * tile's agents of that species (each thread counts those on its cells, a block scan places
 * them in a list of at most `chunk` per round) and one thread per agent sums its 9 candidates
 * (2r+1 row spans each), decides and claims. Shared memory: RS x PW prefix entries (4 or 8 B),
 * chunk x 8 B of agent and position, RS x RW codes: ~42 KB at T = 64, r = 8 (5 blocks per
 * multiprocessor). */
#include <math.h>
#include <string.h>

#include "gpu_check.h"
#include "gpu_model.h"
#include "gpu_policy.h"

extern "C" {
#include "sim_model_rules.h"
#include "sim_rules.h"
}

#define FULL_MASK 0xffffffffu

typedef struct md_sense_args {
    const gpu_md_params *params;
    const float *field[SIM_MAX_FIELDS];
    const uint8_t *code;
    const int32_t *occ;
    const uint32_t *id;
    unsigned long long *claim;
    uint32_t *target;
    unsigned long long *key;
    unsigned long long seed, step;
    int w, h, periodic, n_species;
    unsigned mask;
    gpu_md_plan plan;
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
 * index). Walls and cells beyond a bounded grid score 0. */
__device__ __forceinline__ int64_t md_score64(const gpu_md_species *sp,
                                              const float *const f[SIM_MAX_FIELDS],
                                              unsigned code, size_t g)
{
    if (code == GPU_MD_WALL || code == GPU_MD_OUT)
        return 0;
    int64_t v = 0;
    for (int t = 0; t < sp->n_sense; t++) {
        const int src = sp->src[t];
        int32_t x = src >= SIM_SRC_OCC ? (code == (unsigned)(src - SIM_SRC_OCC) ? SIM_OCC_FIX : 0)
                                       : sim_fix32(md_field(f, src)[g]);
        v += (int64_t)sp->weight[t] * x;
    }
    return v;
}

/* ---- The sense kernel ---- */

/* The 9 candidate sums of an agent at region cell (ax, ay) from the prefix rows; a candidate on
 * a wall or beyond a bounded grid is SIM_SUM_INVALID. */
template <typename PT>
__device__ __forceinline__ void md_agent_sums(const PT *__restrict__ P, int PW,
                                              const uint8_t *__restrict__ cs, int RW,
                                              const int *__restrict__ hw, int r, int ax, int ay,
                                              int64_t s9[SIM_NCAND])
{
#pragma unroll
    for (int c = 0; c < SIM_NCAND; c++) {
        const int cx = ax + sim_cand_dx(c), cy = ay + sim_cand_dy(c);
        const unsigned cc = cs[cy * RW + cx];
        int64_t sum = 0;
        for (int dy = -r; dy <= r; dy++) {
            const int hh = hw[dy < 0 ? -dy : dy];
            const PT *pr = P + (cy + dy) * PW;
            sum += md_span(pr[cx + hh + 1], pr[cx - hh]);
        }
        s9[c] = cc == GPU_MD_WALL || cc == GPU_MD_OUT ? SIM_SUM_INVALID : sum;
    }
}

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

template <typename PT, int MINB>
__global__ void __launch_bounds__(GPU_MD_THREADS, MINB) md_sense_kernel(md_sense_args a)
{
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ int hw[SIM_MAX_RADIUS + 1];
    __shared__ int t_src[SIM_MAX_TERMS];
    __shared__ int32_t t_w[SIM_MAX_TERMS];
    __shared__ int wsum[GPU_MD_THREADS / 32];

    const int T = a.plan.T, R = a.plan.R, RS = a.plan.RS, RW = a.plan.RW, PW = a.plan.PW;
    const int chunk = a.plan.chunk;
    const size_t p_bytes = ((size_t)RS * PW * sizeof(PT) + 15) & ~(size_t)15;
    PT *P = (PT *)smem;
    uint32_t *la = (uint32_t *)(smem + p_bytes);
    uint32_t *lp = la + chunk;
    uint8_t *cs = (uint8_t *)(lp + chunk);

    const int tid = threadIdx.x, nt = blockDim.x, lane = tid & 31, warp = tid >> 5;
    const int nwarps = nt >> 5;
    const int w = a.w, h = a.h, periodic = a.periodic;
    const int x0 = (int)(blockIdx.x % (unsigned)a.plan.ntx) * T;
    const int y0 = (int)(blockIdx.x / (unsigned)a.plan.ntx) * T;
    const int ox = x0 - R, oy = y0 - R; /* the region's origin in the grid */
    /* the whole region inside the grid: no wrapping, no checks */
    const bool inside = ox >= 0 && oy >= 0 && ox + RW <= w && oy + RS <= h;

    /* The region's codes: the state at the start of the step, for every species. A warp per
     * region row, a lane per column (no division, one row base per row). */
    for (int row = warp; row < RS; row += nwarps) {
        const int gy = inside ? oy + row : md_axis(oy + row, h, periodic);
        const uint8_t *grow = a.code + (size_t)(gy < 0 ? 0 : gy) * w;
        uint8_t *crow = cs + row * RW;
        for (int j = lane; j < RW; j += 32) {
            const int gx = inside ? ox + j : md_axis(ox + j, w, periodic);
            crow[j] = gy < 0 || gx < 0 ? (uint8_t)GPU_MD_OUT : grow[gx];
        }
    }

    for (int s = 0; s < a.n_species; s++) {
        if (!((a.mask >> s) & 1u))
            continue;
        const gpu_md_species *sp = &a.params->sp[s];
        const int r = sp->radius, nterm = sp->n_sense;
        for (int i = tid; i <= r; i += nt)
            hw[i] = sim_disk_halfwidth(r, i);
        if (tid < SIM_MAX_TERMS) {
            t_src[tid] = sp->src[tid];
            t_w[tid] = sp->weight[tid];
        }
        __syncthreads(); /* codes, tables; the previous species' agents are done */

        /* The combined score and its prefix rows in one pass: a warp per region row, 32
         * columns at a time; each lane sums its cell's terms (a field term is one load), then
         * a shuffle scan. P[row][0] = 0, P[row][j + 1] = the row's sum over columns 0..j.
         * Walls and cells beyond a bounded grid score 0. */
        for (int row = warp; row < RS; row += nwarps) {
            const int gy = inside ? oy + row : md_axis(oy + row, h, periodic);
            const size_t base = (size_t)(gy < 0 ? 0 : gy) * w;
            const uint8_t *crow = cs + row * RW;
            PT *prow = P + row * PW;
            PT carry = 0;
            if (lane == 0)
                prow[0] = 0;
            for (int j0 = 0; j0 < RW; j0 += 32) {
                const int j = j0 + lane;
                PT v = 0;
                const unsigned c = j < RW ? crow[j] : GPU_MD_OUT;
                if (c != GPU_MD_WALL && c != GPU_MD_OUT) {
                    const int gx = inside ? ox + j : md_axis(ox + j, w, periodic);
                    for (int t = 0; t < nterm; t++) {
                        const int src = t_src[t];
                        int32_t x;
                        if (src >= SIM_SRC_OCC)
                            x = c == (unsigned)(src - SIM_SRC_OCC) ? SIM_OCC_FIX : 0;
                        else
                            x = sim_fix32(__ldg(md_field(a.field, src) + base + gx));
                        /* uint32 rows: products and sums modulo 2^32 (exact spans, above) */
                        v += (PT)t_w[t] * (PT)x;
                    }
                }
#pragma unroll
                for (int o = 1; o < 32; o <<= 1) {
                    PT u = __shfl_up_sync(FULL_MASK, v, o);
                    if (lane >= o)
                        v += u;
                }
                if (j < RW)
                    prow[j + 1] = carry + v;
                carry += __shfl_sync(FULL_MASK, v, 31);
            }
        }

        /* The tile's agents of species s: thread t owns cells t, t + nt, ... of the tile,
         * counts them, and a block scan gives each its place in the list; rounds of `chunk`
         * agents when more stand on the tile. */
        const int TT = T * T, lt = a.plan.log2T;
        int mine = 0;
        for (int i = tid; i < TT; i += nt) {
            const int ly = i >> lt, lx = i & (T - 1);
            mine += x0 + lx < w && y0 + ly < h && cs[(ly + R) * RW + lx + R] == s;
        }
        int total = 0;
        const int first = md_block_scan(mine, wsum, &total); /* its barriers publish P too */
        for (int base = 0; base < total; base += chunk) {
            if (mine > 0 && first < base + chunk && first + mine > base) {
                int k = first;
                for (int i = tid; i < TT; i += nt) {
                    const int ly = i >> lt, lx = i & (T - 1);
                    if (x0 + lx < w && y0 + ly < h && cs[(ly + R) * RW + lx + R] == s) {
                        if (k >= base && k < base + chunk) {
                            la[k - base] = (uint32_t)a.occ[(size_t)(y0 + ly) * w + (x0 + lx)];
                            lp[k - base] = (uint32_t)lx | ((uint32_t)ly << 16);
                        }
                        k++;
                    }
                }
            }
            __syncthreads();
            const int cnt = total - base < chunk ? total - base : chunk;
            /* One thread per agent: 9 sums, decide (sim_decide), claim an empty target. */
            for (int k = tid; k < cnt; k += nt) {
                const uint32_t ag = la[k], pos = lp[k];
                const int lx = (int)(pos & 0xFFFFu), ly = (int)(pos >> 16);
                const uint32_t id = __ldg(a.id + ag);
                int64_t s9[SIM_NCAND];
                md_agent_sums(P, PW, cs, RW, hw, r, lx + R, ly + R, s9);
                const sim_u32x4 rn = sim_random(a.seed, a.step, id, SIM_RNG_STEP);
                const int c = sim_decide(s9, rn, sp->threshold);
                const int dx = sim_cand_dx(c), dy = sim_cand_dy(c);
                const unsigned cc = cs[(ly + R + dy) * RW + lx + R + dx];
                const uint32_t own = (uint32_t)((size_t)(y0 + ly) * w + (x0 + lx));
                uint32_t tcell = own;
                unsigned long long key = 0;
                if (cc == GPU_MD_EMPTY) { /* inside the grid, not a wall, nobody on it */
                    const int gx = md_axis(x0 + lx + dx, w, periodic);
                    const int gy = md_axis(y0 + ly + dy, h, periodic);
                    const uint32_t t = (uint32_t)((size_t)gy * w + gx);
                    if (t != own) {
                        key = sim_claim_key(rn, ag);
                        atomicMax(&a.claim[t], key);
                        tcell = t;
                    }
                }
                a.target[ag] = tcell;
                a.key[ag] = key;
            }
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
    if (cx < 0 || cy < 0 || a.code[(size_t)cy * w + cx] == GPU_MD_WALL) {
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
            sum += md_score64(sp, a.field, a.code[g], g);
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
            if (a.code[g] != GPU_MD_WALL)
                sum += sim_fix32(f[g]);
        }
    }
    out[it] = sum;
}

/* ---- Dispatch ---- */

/* Shared memory of a sense block for tile side T, halo R, prefix entry size pe, chunk. */
static size_t sense_smem(int T, int R, size_t pe, int chunk)
{
    const size_t RS = (size_t)T + 2 * (size_t)R, RW = RS, PW = RW + 1;
    const size_t p = (RS * PW * pe + 15) & ~(size_t)15;
    return p + (size_t)chunk * 2 * sizeof(uint32_t) + RS * RW;
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
    a.code = g->d_code;
    a.occ = g->d_occ;
    a.id = g->a[g->cur].id;
    a.claim = g->d_claim;
    a.target = g->d_target;
    a.key = g->d_key;
    a.seed = g->p.seed;
    a.w = g->p.w;
    a.h = g->p.h;
    a.periodic = g->p.periodic;
    a.n_species = g->p.n_species;
    a.plan = g->plan;
    return a;
}

/* Raises the sense kernel's shared-memory limit and asks for the largest carveout (the default
 * may leave room for fewer blocks than the registers allow); the resident blocks per
 * multiprocessor into *per_sm. */
template <typename PT, int MINB>
static int sense_setup(size_t smem, int *per_sm, sim_err *err)
{
    GPU_CHECK(err, cudaFuncSetAttribute(md_sense_kernel<PT, MINB>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    GPU_CHECK(err, cudaFuncSetAttribute(md_sense_kernel<PT, MINB>,
                                        cudaFuncAttributePreferredSharedMemoryCarveout,
                                        cudaSharedmemCarveoutMaxShared));
    GPU_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                       per_sm, md_sense_kernel<PT, MINB>, GPU_MD_THREADS, smem));
    return SIM_OK;
}

int gpu_md_plan_make(gpu_model *g, int tile, int minb, sim_err *err)
{
    gpu_md_plan *pl = &g->plan;
    memset(pl, 0, sizeof *pl);
    int rmax = 0;
    pl->wide = 0;
    for (int s = 0; s < g->p.n_species; s++) {
        if (g->p.sp[s].radius > rmax)
            rmax = g->p.sp[s].radius;
        if (!spans_fit_32(&g->p.sp[s]))
            pl->wide = 1;
    }
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
    pl->RW = pl->RS;
    pl->PW = pl->RW + 1;
    pl->ntx = (g->p.w + pl->T - 1) / pl->T;
    pl->nty = (g->p.h + pl->T - 1) / pl->T;
    pl->smem = sense_smem(pl->T, pl->R, pe, pl->chunk);
    pl->minb = minb > 0 ? minb : GPU_MD_MINB;
    if (pl->wide && pl->minb == 1)
        GPU_TRY(sense_setup<long long, 1>(pl->smem, &pl->per_sm, err));
    else if (pl->wide)
        GPU_TRY(sense_setup<long long, GPU_MD_MINB_HIGH>(pl->smem, &pl->per_sm, err));
    else if (pl->minb == 1)
        GPU_TRY(sense_setup<uint32_t, 1>(pl->smem, &pl->per_sm, err));
    else
        GPU_TRY(sense_setup<uint32_t, GPU_MD_MINB_HIGH>(pl->smem, &pl->per_sm, err));
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
    cudaStream_t s = g->stream;
    if (g->plan.wide && g->plan.minb == 1)
        md_sense_kernel<long long, 1><<<blocks, GPU_MD_THREADS, sm, s>>>(a);
    else if (g->plan.wide)
        md_sense_kernel<long long, GPU_MD_MINB_HIGH><<<blocks, GPU_MD_THREADS, sm, s>>>(a);
    else if (g->plan.minb == 1)
        md_sense_kernel<uint32_t, 1><<<blocks, GPU_MD_THREADS, sm, s>>>(a);
    else
        md_sense_kernel<uint32_t, GPU_MD_MINB_HIGH><<<blocks, GPU_MD_THREADS, sm, s>>>(a);
    GPU_CHECK_LAUNCH(err, s);
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
