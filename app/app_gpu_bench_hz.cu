/* app_gpu_bench_hz.cu - bench sections 3 and 6: horizon sums of 1M agents at random distinct cells
 * of a 4096^2 field, 9 candidates each, r = 2, 8, 32, by the tile-sum kernel (dense, sparse and
 * the automatic choice, binning included), the naive kernel and the seed-000 approach (one
 * Thrust inner_product over a permutation-iterator tile per sum, timed on a sample); every sum
 * checked equal. Then the tile mappings side by side on the same data (SELL's sums checked equal
 * to the others'). */
#include <thrust/execution_policy.h>
#include <thrust/inner_product.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <string.h>
#include <time.h>

#include "gpu_alloc.h"
#include "gpu_backend.h"
#include "app_gpu_bench.h"
#include "gpu_horizon.h"
#include "gpu_policy.h"

extern "C" {
#include "sim_rules.h"
}

/* Field values in [0, 256) from the counter-based generator. */
__global__ void bench_fill_kernel(float *f, size_t n, uint64_t seed)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        f[i] = (float)(sim_random(seed, i, 0, SIM_RNG_FIELD).v[0] >> 8) * (1.0f / 65536.0f);
}

__global__ void bench_diff_kernel(const int64_t *a, const int64_t *b, size_t n,
                                  unsigned long long *count)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && a[i] != b[i])
        atomicAdd(count, 1ull);
}

/* ---- The seed-000 baseline: a tile of the field seen through a permutation iterator ---- */
struct fix_functor {
    __host__ __device__ int64_t operator()(float v) const { return sim_fix(v); }
};

/* k-th element of the (2r+1)^2 box around (cx, cy) -> field index (periodic). */
struct tile_functor {
    int cx, cy, r, side, w, h;
    __host__ __device__ int operator()(int k) const
    {
        int x = (cx + k % side - r) % w, y = (cy + k / side - r) % h;
        x += x < 0 ? w : 0;
        y += y < 0 ? h : 0;
        return y * w + x;
    }
};

struct stencil_functor {
    int r, side;
    __host__ __device__ int64_t operator()(int k) const
    {
        int dx = k % side - r, dy = k / side - r;
        return dx * dx + dy * dy <= r * r ? 1 : 0;
    }
};

static int64_t thrust_disk(const float *d_field, int w, int h, int r, int cx, int cy,
                           cudaStream_t s)
{
    int side = 2 * r + 1;
    thrust::counting_iterator<int> k0(0);
    thrust::transform_iterator<fix_functor, const float *> fixed(d_field, fix_functor());
    tile_functor tf = {cx, cy, r, side, w, h};
    auto idx = thrust::make_transform_iterator(k0, tf);
    auto tile = thrust::make_permutation_iterator(fixed, idx);
    stencil_functor sf = {r, side};
    auto stencil = thrust::make_transform_iterator(k0, sf);
    return thrust::inner_product(thrust::cuda::par.on(s), tile, tile + side * side, stencil,
                                 (int64_t)0);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* n distinct random cells of [0, cells): rejection against a bitmap (n is a few % of cells). */
static int pick_cells(uint32_t *out, int64_t n, int64_t cells)
{
    uint8_t *used = (uint8_t *)calloc((size_t)(cells + 7) / 8, 1);
    if (!used)
        return SIM_ENOMEM;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < n;) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        uint64_t c = (x * 0x2545F4914F6CDD1Dull >> 16) % (uint64_t)cells;
        if (used[c / 8] & (1u << (c % 8)))
            continue;
        used[c / 8] |= (uint8_t)(1u << (c % 8));
        out[i++] = (uint32_t)c;
    }
    free(used);
    return SIM_OK;
}

typedef struct hz_bench {
    int side;
    int64_t n, cells;
    float *d_field;
    uint32_t *d_cells;
    int64_t *d_sums[3];
    unsigned long long *d_count;
    unsigned *d_queue;
    gpu_bins bins;
} hz_bench;

static void hz_bench_free(hz_bench *b)
{
    gpu_alloc_free(b->d_field);
    gpu_alloc_free(b->d_cells);
    for (int i = 0; i < 3; i++)
        gpu_alloc_free(b->d_sums[i]);
    gpu_alloc_free(b->d_count);
    gpu_alloc_free(b->d_queue);
    gpu_bins_free(&b->bins);
}

static int hz_bench_setup(gpu_bench_ctx *c, hz_bench *b, sim_err *err)
{
    b->cells = (int64_t)b->side * b->side;
    uint32_t *h_cells = (uint32_t *)malloc((size_t)b->n * sizeof(uint32_t));
    if (!h_cells || pick_cells(h_cells, b->n, b->cells) != SIM_OK) {
        free(h_cells);
        return sim_err_set(err, SIM_ENOMEM, "bench: out of host memory");
    }
    /* What is allocated before a failure stays in *b for hz_bench_free. */
    const char *what = "bench horizon buffers";
    int rc = gpu_alloc_device((void **)&b->d_field, (size_t)b->cells * sizeof(float), what, err);
    if (rc == SIM_OK)
        rc = gpu_alloc_device((void **)&b->d_cells, (size_t)b->n * sizeof(uint32_t), what, err);
    for (int i = 0; i < 3 && rc == SIM_OK; i++)
        rc = gpu_alloc_device((void **)&b->d_sums[i], (size_t)b->n * 9 * sizeof(int64_t), what,
                              err);
    if (rc == SIM_OK)
        rc = gpu_alloc_device((void **)&b->d_count, sizeof(unsigned long long), what, err);
    if (rc == SIM_OK)
        rc = gpu_alloc_device((void **)&b->d_queue, sizeof(unsigned), what, err);
    if (rc != SIM_OK) {
        free(h_cells);
        return rc;
    }
    cudaError_t e = cudaMemcpy(b->d_cells, h_cells, (size_t)b->n * sizeof(uint32_t),
                               cudaMemcpyHostToDevice);
    free(h_cells);
    if (e != cudaSuccess)
        return gpu_fail(err, e, __FILE__, __LINE__, "bench horizon buffers");
    bench_fill_kernel<<<(unsigned)((b->cells + 255) / 256), 256, 0, c->s>>>(b->d_field,
                                                                            (size_t)b->cells, 42);
    GPU_CHECK_LAUNCH(err, c->s);
    /* bins sized for the smallest tile (the most tiles) */
    gpu_hz_geom g;
    gpu_hz_geometry(b->side, b->side, 1, SIM_MAX_RADIUS, &g);
    rc = gpu_bins_alloc(&b->bins, b->n, g.ntiles, err);
    return rc;
}

static int count_diff(gpu_bench_ctx *c, hz_bench *b, int i, int j, unsigned long long *out,
                      sim_err *err)
{
    size_t m = (size_t)b->n * 9;
    GPU_CHECK(err, cudaMemsetAsync(b->d_count, 0, sizeof *b->d_count, c->s));
    bench_diff_kernel<<<(unsigned)((m + 255) / 256), 256, 0, c->s>>>(b->d_sums[i], b->d_sums[j],
                                                                     m, b->d_count);
    GPU_CHECK_LAUNCH(err, c->s);
    GPU_CHECK(err, cudaMemcpyAsync(out, b->d_count, sizeof *out, cudaMemcpyDeviceToHost, c->s));
    GPU_CHECK(err, cudaStreamSynchronize(c->s));
    return SIM_OK;
}

/* Bin + tile-sum into d_sums[slot] with the given mode and mapping. */
static int run_tiles(gpu_bench_ctx *c, hz_bench *b, const gpu_hz_geom *g, int mode, int mapping,
                     int slot, int reps, double *ms, sim_err *err)
{
    gpu_hz_plan p;
    GPU_TRY(gpu_hz_plan_make(g, mode, mapping, &p, err));
    return gpu_bench_time(c, reps, [&]() -> int {
        GPU_TRY(gpu_bins_build(&b->bins, g, b->d_cells, b->n, c->s, err));
        return gpu_hz_sums(&p, &b->bins, b->d_field, b->d_cells, b->d_sums[slot], b->d_queue,
                           c->s, err);
    }, ms, err);
}

static const char *mode_name(int m)
{
    return m == GPU_HMODE_DENSE ? "dense" : "sparse";
}

static const char *map_name(int m)
{
    return m == GPU_MAP_RAKE    ? "rake"
         : m == GPU_MAP_STRIP   ? "strip-mine"
         : m == GPU_MAP_DYNAMIC ? "dynamic"
         : m == GPU_MAP_BLOCK   ? "block/tile"
                                : "sell-C-sigma";
}

static int bench_radii(gpu_bench_ctx *c, hz_bench *b, sim_err *err)
{
    static const int radii[3] = {2, 8, 32};
    const int reps = c->quick ? 3 : 15, samples = c->quick ? 27 : 270;
    double tile_ms[3] = {0, 0, 0};
    double naive_ms[3] = {0, 0, 0};
    FILE *t = c->table, *j = c->json;
    fprintf(t, "\ngpu horizon sums: %dx%d field, %lld agents at distinct random cells, 9 "
            "candidates each (tile-sum times include binning)\n", b->side, b->side,
            (long long)b->n);
    fprintf(t, "  %3s %7s %9s %9s %9s %8s %10s %11s %9s %6s\n", "r", "auto", "tile ms",
            "dense ms", "sparse ms", "bin ms", "naive ms", "thrust us/s", "naive/tile", "equal");
    if (j) {
        gpu_bench_member(c);
        fprintf(j, "\"horizon\": {\"field\": %d, \"agents\": %lld, \"radii\": [", b->side,
                (long long)b->n);
    }
    for (int ri = 0; ri < 3; ri++) {
        const int r = radii[ri];
        gpu_hz_geom g;
        gpu_hz_geometry(b->side, b->side, 1, r, &g);
        int automode = gpu_hz_choose_mode(&g, b->n, GPU_HMODE_AUTO);
        double dense = -1.0, sparse = 0.0, naive = 0.0, bin = 0.0;
        int dense_ok = gpu_hz_choose_mode(&g, b->n, GPU_HMODE_DENSE) == GPU_HMODE_DENSE;
        if (dense_ok)
            GPU_TRY(run_tiles(c, b, &g, GPU_HMODE_DENSE, GPU_HZ_MAPPING, 0, reps, &dense, err));
        GPU_TRY(run_tiles(c, b, &g, GPU_HMODE_SPARSE, GPU_HZ_MAPPING, 1, reps, &sparse, err));
        GPU_TRY(gpu_bench_time(c, reps, [&]() -> int {
            return gpu_bins_build(&b->bins, &g, b->d_cells, b->n, c->s, err);
        }, &bin, err));
        GPU_TRY(gpu_bench_time(c, c->quick ? 1 : 3, [&]() -> int {
            return gpu_hz_naive(&g, b->d_field, b->d_cells, b->n, b->d_sums[2], c->s, err);
        }, &naive, err));
        unsigned long long d01 = 0, d12 = 0;
        if (dense_ok)
            GPU_TRY(count_diff(c, b, 0, 2, &d01, err));
        GPU_TRY(count_diff(c, b, 1, 2, &d12, err));

        /* Thrust, one call per sum, on a sample spread over agents and candidates. */
        uint32_t *h_cells = (uint32_t *)malloc((size_t)samples * sizeof(uint32_t));
        int64_t *h_ref = (int64_t *)malloc((size_t)samples * sizeof(int64_t));
        if (!h_cells || !h_ref) {
            free(h_cells);
            free(h_ref);
            return sim_err_set(err, SIM_ENOMEM, "bench: out of host memory");
        }
        int64_t stride = b->n / samples;
        for (int k = 0; k < samples; k++) {
            GPU_CHECK(err, cudaMemcpyAsync(&h_cells[k], b->d_cells + k * stride,
                                           sizeof(uint32_t), cudaMemcpyDeviceToHost, c->s));
            GPU_CHECK(err, cudaMemcpyAsync(&h_ref[k], b->d_sums[2] + (k * stride) * 9 + k % 9,
                                           sizeof(int64_t), cudaMemcpyDeviceToHost, c->s));
        }
        GPU_CHECK(err, cudaStreamSynchronize(c->s));
        int thrust_bad = 0;
        (void)thrust_disk(b->d_field, b->side, b->side, r, 0, 0, c->s); /* warm-up */
        double t0 = now_s();
        for (int k = 0; k < samples; k++) {
            int x = (int)(h_cells[k] % (uint32_t)b->side), y = (int)(h_cells[k] / (uint32_t)b->side);
            int64_t v = thrust_disk(b->d_field, b->side, b->side, r, x + sim_cand_dx(k % 9),
                                    y + sim_cand_dy(k % 9), c->s);
            thrust_bad += v != h_ref[k];
        }
        double thrust_us = (now_s() - t0) / samples * 1e6;
        free(h_cells);
        free(h_ref);

        int equal = d01 == 0 && d12 == 0 && thrust_bad == 0;
        double tile = automode == GPU_HMODE_DENSE ? dense : sparse;
        tile_ms[ri] = tile;
        naive_ms[ri] = naive;
        char dense_txt[32];
        if (dense_ok)
            snprintf(dense_txt, sizeof dense_txt, "%9.3f", dense);
        else
            snprintf(dense_txt, sizeof dense_txt, "%9s", "-");
        fprintf(t, "  %3d %7s %9.3f %s %9.3f %8.3f %10.3f %11.2f %8.1fx %6s\n", r,
                mode_name(automode), tile, dense_txt, sparse, bin, naive, thrust_us, naive / tile,
                equal ? "yes" : "NO");
        if (j)
            fprintf(j, "%s{\"r\": %d, \"auto_mode\": \"%s\", \"tile_ms\": %.4f, \"dense_ms\": %.4f, "
                    "\"sparse_ms\": %.4f, \"bin_ms\": %.4f, \"naive_ms\": %.4f, "
                    "\"thrust_us_per_sum\": %.3f, \"thrust_samples\": %d, \"naive_over_tile\": %.2f, "
                    "\"equal\": %s}", ri ? ", " : "", r, mode_name(automode), tile, dense, sparse,
                    bin, naive, thrust_us, samples, naive / tile, equal ? "true" : "false");
        if (!equal) {
            fprintf(t, "  r=%d: %llu dense and %llu sparse sums differ from naive, %d of %d "
                    "Thrust sums\n", r, d01, d12, thrust_bad, samples);
            c->failed++;
        }
    }
    int ok8 = naive_ms[1] / tile_ms[1] >= 20.0, ok32 = naive_ms[2] / tile_ms[2] >= 100.0;
    int okr = tile_ms[2] <= 4.0 * tile_ms[1];
    fprintf(t, "  targets: naive/tile >= 20x at r=8: %.1fx %s; >= 100x at r=32: %.1fx %s; "
            "t(r=32) <= 4 t(r=8): %.2fx %s\n", naive_ms[1] / tile_ms[1], ok8 ? "met" : "MISSED",
            naive_ms[2] / tile_ms[2], ok32 ? "met" : "MISSED", tile_ms[2] / tile_ms[1],
            okr ? "met" : "MISSED");
    if (j)
        fprintf(j, "], \"target_r8_20x\": %s, \"target_r32_100x\": %s, \"target_r32_4x_r8\": %s}",
                ok8 ? "true" : "false", ok32 ? "true" : "false", okr ? "true" : "false");
    return SIM_OK;
}

/* One mapping's tile-sum time on the bins built, its sums into d_sums[slot]; *p: its plan. */
static int time_mapping(gpu_bench_ctx *c, hz_bench *b, const gpu_hz_geom *g, int mode, int m,
                        int slot, gpu_hz_plan *p, double *ms, sim_err *err)
{
    const int reps = c->quick ? 3 : 15;
    GPU_TRY(gpu_hz_plan_make(g, mode, m, p, err));
    return gpu_bench_time(c, reps, [&]() -> int {
        return gpu_hz_sums(p, &b->bins, b->d_field, b->d_cells, b->d_sums[slot], b->d_queue,
                           c->s, err);
    }, ms, err);
}

/* The mappings on the same bins; SELL (when it runs: sparse mode, its slices' regions fit) is
 * also checked against the others' sums, which the radii section checked against the naive
 * kernel. smem and blocks/SM: of one tile (the other mappings) and of SELL's slice. */
static int bench_mappings(gpu_bench_ctx *c, hz_bench *b, sim_err *err)
{
    static const int radii[2] = {8, 32};
    FILE *t = c->table, *j = c->json;
    fprintf(t, "\ngpu tile mappings (tile-sum kernel only, automatic mode; persistent grids of "
            "blocks/SM x SMs vs one block per tile; sell: C = %d tiles a slice, sorted in "
            "windows of sigma = %d):\n", GPU_HZ_SELL_C, GPU_HZ_SELL_SIGMA);
    fprintf(t, "  %3s %6s %5s %9s %10s %10s %10s %10s %10s %10s %8s %6s %12s\n", "r", "mode",
            "tile", "smem KB", "blocks/SM", "rake ms", "strip ms", "dynamic ms", "block ms",
            "sell ms", "sell/SM", "equal", "best");
    if (j) {
        gpu_bench_member(c);
        fprintf(j, "\"mapping\": [");
    }
    for (int ri = 0; ri < 2; ri++) {
        gpu_hz_geom g;
        gpu_hz_geometry(b->side, b->side, 1, radii[ri], &g);
        int mode = gpu_hz_choose_mode(&g, b->n, GPU_HMODE_AUTO);
        GPU_TRY(gpu_bins_build(&b->bins, &g, b->d_cells, b->n, c->s, err));
        double ms[GPU_MAP_SELL];
        gpu_hz_plan p[GPU_MAP_SELL];
        for (int m = GPU_MAP_RAKE; m <= GPU_MAP_SELL; m++)
            GPU_TRY(time_mapping(c, b, &g, mode, m, m == GPU_MAP_SELL, &p[m - 1], &ms[m - 1],
                                 err));
        const gpu_hz_plan *tile = &p[GPU_MAP_DYNAMIC - 1], *sell = &p[GPU_MAP_SELL - 1];
        const int sell_ran = sell->mapping == GPU_MAP_SELL;
        unsigned long long diff = 0;
        if (sell_ran)
            GPU_TRY(count_diff(c, b, 0, 1, &diff, err));
        else
            ms[GPU_MAP_SELL - 1] = -1.0; /* it ran as dynamic */
        int best = GPU_MAP_RAKE;
        for (int m = GPU_MAP_STRIP; m <= GPU_MAP_SELL; m++)
            if (ms[m - 1] >= 0.0 && ms[m - 1] < ms[best - 1])
                best = m;
        char sell_txt[2][32]; /* time and blocks/SM, or "-" where it ran as dynamic */
        snprintf(sell_txt[0], sizeof sell_txt[0], "%10s", "-");
        snprintf(sell_txt[1], sizeof sell_txt[1], "%8s", "-");
        if (sell_ran) {
            snprintf(sell_txt[0], sizeof sell_txt[0], "%10.3f", ms[GPU_MAP_SELL - 1]);
            snprintf(sell_txt[1], sizeof sell_txt[1], "%8d", sell->per_sm);
        }
        fprintf(t, "  %3d %6s %5d %9.1f %10d %10.3f %10.3f %10.3f %10.3f %s %s %6s %12s\n",
                radii[ri], mode_name(mode), g.T, tile->smem / 1024.0, tile->per_sm, ms[0], ms[1],
                ms[2], ms[3], sell_txt[0], sell_txt[1], !sell_ran ? "-" : diff ? "NO" : "yes",
                map_name(best));
        if (j)
            fprintf(j, "%s{\"r\": %d, \"mode\": \"%s\", \"tile\": %d, \"smem\": %zu, "
                    "\"blocks_per_sm\": %d, \"rake_ms\": %.4f, \"strip_ms\": %.4f, "
                    "\"dynamic_ms\": %.4f, \"block_ms\": %.4f, \"sell_ms\": %.4f, "
                    "\"sell_c\": %d, \"sell_sigma\": %d, \"sell_smem\": %zu, "
                    "\"sell_blocks_per_sm\": %d, \"sell_equal\": %s, \"best\": \"%s\"}",
                    ri ? ", " : "", radii[ri], mode_name(mode), g.T, tile->smem, tile->per_sm,
                    ms[0], ms[1], ms[2], ms[3], ms[4], GPU_HZ_SELL_C, GPU_HZ_SELL_SIGMA,
                    sell_ran ? sell->smem : 0, sell_ran ? sell->per_sm : 0,
                    !sell_ran ? "null" : diff ? "false" : "true", map_name(best));
        if (sell_ran && diff) {
            fprintf(t, "  r=%d: %llu sell sums differ from the other mappings'\n", radii[ri],
                    diff);
            c->failed++;
        }
    }
    if (j)
        fprintf(j, "]");
    return SIM_OK;
}

int gpu_bench_horizon(gpu_bench_ctx *c, int side, sim_err *err)
{
    hz_bench b;
    memset(&b, 0, sizeof b);
    b.side = side;
    b.n = (int64_t)side * side / 16; /* 1M agents on 4096^2 */
    int rc = hz_bench_setup(c, &b, err);
    if (rc == SIM_OK)
        rc = bench_radii(c, &b, err);
    if (rc == SIM_OK)
        rc = bench_mappings(c, &b, err);
    hz_bench_free(&b);
    return rc;
}
