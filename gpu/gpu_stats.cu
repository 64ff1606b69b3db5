/* gpu_stats.cu - statistics and checksums on the device (see gpu_stats.h).
 *
 * The field total must equal the CPU's double sum column by column, rows in order: a serial
 * chain per column. A block owns 32 columns; seven warps stage 112-row chunks in shared memory
 * (double-buffered) while warp 0 adds the staged rows in order, one lane per column; grids of
 * at most GPU_ST_ONE_WARP_ROWS rows take one warp a block instead, which stages its own rows by
 * cp.async (st_colsum1_kernel). The
 * checksum and max terms, which need no order, come from a second pass over every cell at full
 * occupancy (st_cells_kernel). */
#include <cuda_pipeline.h>
#include <math.h>

#include "gpu_check.h"
#include "gpu_pdl.cuh"
#include "gpu_policy.h"
#include "gpu_stats.cuh"

extern "C" {
#include "sim_rules.h"
}

#define FULL_MASK 0xffffffffu

float gpu_float_from_key(unsigned key)
{
    if (key == 0)
        return -INFINITY;
    unsigned b = (key & 0x80000000u) ? (key & 0x7fffffffu) : ~key;
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* Zeroes every output of *c (not the step): ctl_reset_kernel's work, and st_ring_kernel's for
 * the next step of a batch. */
__device__ __forceinline__ void ctl_zero(gpu_ctl *c)
{
    c->moved = 0;
    c->checksum = 0;
    c->max_key = 0;
    c->residual = 0;
    c->queue = 0;
    c->mag_hi = 0;
    c->mag_lo = 0;
}

__global__ void ctl_reset_kernel(gpu_ctl *c)
{
    ctl_zero(c);
}

/* Loader warp l (1..) stages rows (l-1)*GPU_ST_ROWS .. of chunk k: all its loads are requested
 * before any is stored. */
__device__ __forceinline__ void st_stage(const float *__restrict__ f, int w, int h, int x, int y0,
                                         float (*dst)[GPU_ST_COLS + 1], int lane)
{
    float v[GPU_ST_ROWS];
#pragma unroll
    for (int q = 0; q < GPU_ST_ROWS; q++) {
        int y = y0 + q;
        v[q] = y < h && x < w ? f[(size_t)y * w + x] : 0.0f;
    }
#pragma unroll
    for (int q = 0; q < GPU_ST_ROWS; q++)
        dst[q][lane] = v[q];
}

/* The column sums. Thread mapping: a block of GPU_ST_THREADS owns columns x0 .. x0+31; warps 1..
 * stage chunks of (warps - 1) * GPU_ST_ROWS rows into shared memory (double-buffered), warp 0
 * adds the staged rows in order, lane = column, in double. Shared memory: 2 chunks x (COLS+1)
 * floats. The checksum and max terms are st_cells_kernel's: hashing here, on the few warps a
 * column chain can have, made the loaders the pass's bound. */
#define ST_LOADERS (GPU_ST_THREADS / 32 - 1)
#define ST_CHUNK (ST_LOADERS * GPU_ST_ROWS)
/* gpu_stats_colsum's d_part: where gpu_colsum_exact holds (true, the same in every thread),
 * column x's sum (x < w) goes into colsum; either way the thread that owns x (mine) leaves its
 * part word zero for the next pass. */
__device__ __forceinline__ bool st_part_take(const gpu_ctl *ex, double *part, int x, int w, int h,
                                             double *colsum, bool mine)
{
    if (!part)
        return false;
    const bool exact = gpu_colsum_exact(ex, h);
    if (mine && x < w) {
        if (exact)
            colsum[x] = part[x];
        part[x] = 0.0;
    }
    return exact;
}

__global__ void __launch_bounds__(GPU_ST_THREADS)
st_colsum_kernel(const float *__restrict__ f, int w, int h, double *colsum, const gpu_ctl *ex,
                 double *part)
{
    __shared__ float buf[2][ST_CHUNK][GPU_ST_COLS + 1];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int x = (int)blockIdx.x * GPU_ST_COLS + lane;
    if (st_part_take(ex, part, x, w, h, colsum, warp == 0))
        return;
    const int nchunks = (h + ST_CHUNK - 1) / ST_CHUNK;

    if (warp > 0)
        st_stage(f, w, h, x, (warp - 1) * GPU_ST_ROWS, buf[0] + (warp - 1) * GPU_ST_ROWS, lane);
    __syncthreads();
    double acc = 0.0;
    for (int k = 0; k < nchunks; k++) {
        if (warp == 0) {
            const int rows = min(ST_CHUNK, h - k * ST_CHUNK);
            const float(*b)[GPU_ST_COLS + 1] = buf[k & 1];
            /* Still one addition after the other, in row order; unrolled, the shared-memory
             * loads are issued ahead of the chain (rolled, each waited for its load). */
            if (rows == ST_CHUNK) {
#pragma unroll 16
                for (int rr = 0; rr < ST_CHUNK; rr++)
                    acc += (double)b[rr][lane];
            } else {
#pragma unroll 4
                for (int rr = 0; rr < rows; rr++)
                    acc += (double)b[rr][lane];
            }
        } else if (k + 1 < nchunks) {
            st_stage(f, w, h, x, (k + 1) * ST_CHUNK + (warp - 1) * GPU_ST_ROWS,
                     buf[(k + 1) & 1] + (warp - 1) * GPU_ST_ROWS, lane);
        }
        __syncthreads();
    }
    if (warp == 0 && x < w)
        colsum[x] = acc;
}

/* The column sums by one warp a block, for grids of at most GPU_ST_ONE_WARP_ROWS rows (the
 * choice in gpu_stats_colsum): lane = column, 32 columns a block; the warp keeps
 * GPU_ST_DEPTH - 1 batches of GPU_ST_BATCH rows in flight as asynchronous copies (cp.async) into
 * a ring in shared memory while it adds the oldest batch in row order, in double: the same
 * additions in the same order as st_colsum_kernel. Each lane copies and reads only its own
 * column's words, so the copies need no barrier. Shared memory: GPU_ST_DEPTH x GPU_ST_BATCH x 32
 * floats (16 KB). */
__device__ __forceinline__ void st_colsum_lane(const float *__restrict__ f, int w, int h, int x,
                                               float (*ring)[GPU_ST_BATCH][32], double *colsum)
{
    const int lane = threadIdx.x & 31;
    const int nb = (h + GPU_ST_BATCH - 1) / GPU_ST_BATCH;
    const bool col = x < w;
    const float *colp = f + (col ? x : 0);
    /* batch b's copies into slot b % DEPTH, then one commit (a group, empty past the end); a
     * full batch's copies unrolled from one row pointer: the warp is alone on its scheduler
     * and waits out each instruction's latency, so a loop's address arithmetic set its pace
     * (ncu, H100, 512^2: 14.5 us a launch as a loop, 12.5 unrolled) */
    auto issue = [&](int b) {
        if (col && b < nb) {
            const int y0 = b * GPU_ST_BATCH;
            const float *p = colp + (size_t)y0 * (size_t)w;
            float *d = &ring[b % GPU_ST_DEPTH][0][lane];
            if (y0 + GPU_ST_BATCH <= h) {
#pragma unroll
                for (int q = 0; q < GPU_ST_BATCH; q++)
                    __pipeline_memcpy_async(d + 32 * q, p + (size_t)q * (size_t)w,
                                            sizeof(float));
            } else {
                for (int q = 0; q < h - y0; q++)
                    __pipeline_memcpy_async(d + 32 * q, p + (size_t)q * (size_t)w,
                                            sizeof(float));
            }
        }
        __pipeline_commit();
    };
#pragma unroll 1
    for (int b = 0; b < GPU_ST_DEPTH - 1; b++)
        issue(b);
    double acc = 0.0;
#pragma unroll 1
    for (int b = 0; b < nb; b++) {
        issue(b + GPU_ST_DEPTH - 1);             /* into the slot batch b - 1 left */
        __pipeline_wait_prior(GPU_ST_DEPTH - 1); /* batch b is in */
        if (!col)
            continue;
        const float(*src)[32] = ring[b % GPU_ST_DEPTH];
        const int rows = min(GPU_ST_BATCH, h - b * GPU_ST_BATCH);
        /* one addition after the other, in row order; the loads unrolled ahead of the chain */
        if (rows == GPU_ST_BATCH) {
#pragma unroll
            for (int q = 0; q < GPU_ST_BATCH; q++)
                acc += (double)src[q][lane];
        } else {
            for (int q = 0; q < rows; q++)
                acc += (double)src[q][lane];
        }
    }
    if (col)
        colsum[x] = acc;
}

__global__ void __maxnreg__(GPU_ST_ONE_WARP_REGS)
st_colsum1_kernel(const float *__restrict__ f, int w, int h, double *colsum, const gpu_ctl *ex,
                  double *part)
{
    __shared__ float ring[GPU_ST_DEPTH][GPU_ST_BATCH][32];
    const int x = (int)blockIdx.x * 32 + (int)threadIdx.x;
    if (st_part_take(ex, part, x, w, h, colsum, true))
        return;
    st_colsum_lane(f, w, h, x, ring, colsum);
}

/* Deferred column sums (gpu_stats_defer): block (g, y) sums columns 32g .. 32g + 31 of deferred
 * step j0 + y's snapshot into its column-sum slot, as st_colsum1_kernel does. */
__global__ void __maxnreg__(GPU_ST_ONE_WARP_REGS)
st_defer_colsum_kernel(const float *__restrict__ snap, int w, int h, int64_t cells, unsigned cap,
                       int j0, double *colsum_ring)
{
    __shared__ float ring[GPU_ST_DEPTH][GPU_ST_BATCH][32];
    const unsigned j = (unsigned)j0 + blockIdx.y;
    st_colsum_lane(snap + (size_t)(j % cap) * gpu_defer_slot_floats(cells), w, h,
                   (int)blockIdx.x * 32 + (int)threadIdx.x, ring, colsum_ring + (size_t)j * w);
}

/* The checksum terms (cell index base + i) and the max of cells i = first, first + stride, ...
 * in groups of four (one 16-byte load), then the last cells % 4 one by one, into t. */
__device__ __forceinline__ void st_cells_terms(const float *__restrict__ f, int64_t cells,
                                               unsigned long long base, int64_t first,
                                               int64_t stride, gpu_terms &t)
{
    const int64_t quads = cells / 4;
    const float4 *f4 = (const float4 *)f;
    for (int64_t q = first; q < quads; q += stride) {
        const float4 v = f4[q];
        const float e[4] = {v.x, v.y, v.z, v.w};
        /* one multiplication a group: cell 4q + k's is the first's plus k times the constant */
        const unsigned long long ig = (base + (unsigned long long)(4 * q)) * SIM_CHECKSUM_GOLDEN;
#pragma unroll
        for (int k = 0; k < 4; k++)
            gpu_cell_terms(t, ig + (unsigned long long)k * SIM_CHECKSUM_GOLDEN, e[k]);
    }
    for (int64_t i = 4 * quads + first; i < cells; i += stride)
        gpu_cell_terms(t, (base + (unsigned long long)i) * SIM_CHECKSUM_GOLDEN, f[i]);
}

/* The field's checksum terms (cell index base + i) and its max, every cell in any order:
 * grid-stride, four cells a thread from one 16-byte load where the field allows. */
__global__ void st_cells_kernel(const float *__restrict__ f, int64_t cells,
                                unsigned long long base, gpu_ctl *ctl)
{
    gpu_terms t = gpu_terms_none();
    st_cells_terms(f, cells, base, (int64_t)blockIdx.x * blockDim.x + threadIdx.x,
                   (int64_t)gridDim.x * blockDim.x, t);
    gpu_commit_sum_max(t.cs, gpu_terms_key(t), ctl, 1);
}

/* Deferred checksum terms and max (gpu_stats_defer): blocks (b, y) of deferred step j0 + y hash
 * its snapshot's cells and its agents' (id, cell) pairs, grid-stride over the x blocks, into the
 * step's control slot. */
__global__ void st_defer_terms_kernel(const float *__restrict__ snap,
                                      const uint2 *__restrict__ asnap, int64_t cells, int64_t n,
                                      unsigned cap, int j0, const unsigned *ctl_of,
                                      gpu_ctl *ctl_ring)
{
    const unsigned slot = ((unsigned)j0 + blockIdx.y) % cap;
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x,
                  stride = (int64_t)gridDim.x * blockDim.x;
    gpu_terms t = gpu_terms_none();
    st_cells_terms(snap + (size_t)slot * gpu_defer_slot_floats(cells), cells, 0, first, stride,
                   t);
    const uint2 *a = asnap + (size_t)slot * (size_t)n;
    for (int64_t i = first; i < n; i += stride)
        t.cs += gpu_checksum_agent(a[i].x, a[i].y);
    gpu_commit_sum_max(t.cs, gpu_terms_key(t), ctl_ring + ctl_of[slot], 1);
}

/* Thread mapping: block j, one warp, adds step j's column sums: the warp stages up to
 * GPU_ST_TOTAL_CHUNK of them in shared memory (every load in flight at once), then lane 0 adds
 * them in column order (the loads from shared memory unrolled ahead of the chain). */
__global__ void st_total_kernel(const double *__restrict__ colsum_ring, int w, double *total_ring)
{
    __shared__ double buf[GPU_ST_TOTAL_CHUNK];
    const double *c = colsum_ring + (size_t)blockIdx.x * (size_t)w;
    const int lane = threadIdx.x;
    double total = 0.0;
    for (int x0 = 0; x0 < w; x0 += GPU_ST_TOTAL_CHUNK) {
        const int n = min(GPU_ST_TOTAL_CHUNK, w - x0);
        for (int i = lane; i < n; i += 32)
            buf[i] = c[x0 + i];
        __syncwarp();
        if (lane == 0) {
#pragma unroll 16
            for (int i = 0; i < n; i++)
                total += buf[i];
        }
        __syncwarp(); /* buf is read no more */
    }
    if (lane == 0)
        total_ring[blockIdx.x] = total;
}

__global__ void st_max_kernel(const float *__restrict__ f, int64_t n, gpu_ctl *ctl)
{
    unsigned mk = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        float v = f[i];
        if (v == v)
            mk = max(mk, gpu_float_key(v));
    }
    gpu_commit_sum_max(0, mk, ctl, 0);
}

__global__ void st_agents_kernel(const uint32_t *__restrict__ cells, int64_t n, gpu_ctl *ctl)
{
    unsigned long long cs = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        cs += gpu_checksum_agent((uint32_t)i, cells[i]);
    gpu_commit_sum_max(cs, 0, ctl, 1);
}

/* Thread mapping: one block; thread 0 copies the control block, zeroes its outputs and moves
 * the positions, every thread copies columns x = threadIdx.x + k * blockDim.x. No shared memory
 * but two words. */
__global__ void st_ring_kernel(gpu_ctl *ctl, const double *__restrict__ colsum, int w,
                               gpu_ctl *ctl_ring, double *colsum_ring, int take, unsigned *ctl_of,
                               unsigned cap, unsigned *pos)
{
    __shared__ unsigned s_pos[2];
    gpu_pdl_wait(); /* the step's control block and column sums (gpu_pdl.cuh) */
    gpu_pdl_release();
    if (threadIdx.x == 0) {
        s_pos[0] = pos[0];
        s_pos[1] = pos[1];
    }
    __syncthreads();
    if (colsum_ring) {
        double *dst = colsum_ring + (size_t)s_pos[1] * (size_t)w;
        for (int x = threadIdx.x; x < w; x += blockDim.x)
            dst[x] = colsum[x];
    }
    if (threadIdx.x == 0) {
        ctl_ring[s_pos[0]] = *ctl;
        ctl_zero(ctl); /* ctl_reset_kernel's work at a step's start, done here for the next */
        pos[0] = s_pos[0] + 1;
        if (colsum_ring || take)
            pos[1] = s_pos[1] + 1;
        if (ctl_of)
            ctl_of[s_pos[1] % cap] = s_pos[0];
    }
}

static unsigned grid_for(int64_t n)
{
    int64_t b = (n + GPU_EW_THREADS - 1) / GPU_EW_THREADS;
    if (b > 4096)
        b = 4096; /* grid-stride beyond a few waves */
    return (unsigned)(b > 0 ? b : 1);
}

int gpu_ctl_reset(gpu_ctl *d_ctl, cudaStream_t s, sim_err *err)
{
    ctl_reset_kernel<<<1, 1, 0, s>>>(d_ctl);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

int gpu_stats_field(const float *d_field, int w, int h, double *d_colsum, gpu_ctl *d_ctl,
                    cudaStream_t s, sim_err *err)
{
    return gpu_stats_field_at(d_field, w, h, 0, d_colsum, d_ctl, s, err);
}

int gpu_stats_field_at(const float *d_field, int w, int h, uint64_t base, double *d_colsum,
                       gpu_ctl *d_ctl, cudaStream_t s, sim_err *err)
{
    const int64_t cells = (int64_t)w * h;
    st_cells_kernel<<<grid_for((cells + 3) / 4), GPU_EW_THREADS, 0, s>>>(d_field, cells, base,
                                                                        d_ctl);
    GPU_CHECK_LAUNCH(err, s);
    return gpu_stats_colsum(d_field, w, h, d_colsum, NULL, NULL, s, err);
}

int gpu_stats_colsum(const float *d_field, int w, int h, double *d_colsum, const gpu_ctl *d_ex,
                     double *d_part, cudaStream_t s, sim_err *err)
{
    if (h <= GPU_ST_ONE_WARP_ROWS) {
        st_colsum1_kernel<<<(unsigned)((w + 31) / 32), 32, 0, s>>>(d_field, w, h, d_colsum, d_ex,
                                                                   d_part);
    } else {
        unsigned blocks = (unsigned)((w + GPU_ST_COLS - 1) / GPU_ST_COLS);
        st_colsum_kernel<<<blocks, GPU_ST_THREADS, 0, s>>>(d_field, w, h, d_colsum, d_ex, d_part);
    }
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

int gpu_stats_totals(const double *colsum_ring, int w, int m, double *total_ring, cudaStream_t s,
                     sim_err *err)
{
    if (m <= 0)
        return SIM_OK;
    st_total_kernel<<<(unsigned)m, 32, 0, s>>>(colsum_ring, w, total_ring);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

int gpu_stats_max(const float *d_field, int64_t cells, gpu_ctl *d_ctl, cudaStream_t s,
                  sim_err *err)
{
    st_max_kernel<<<grid_for(cells), GPU_EW_THREADS, 0, s>>>(d_field, cells, d_ctl);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

int gpu_stats_agents(const uint32_t *d_cells, int64_t n, gpu_ctl *d_ctl, cudaStream_t s,
                     sim_err *err)
{
    if (n <= 0)
        return SIM_OK;
    st_agents_kernel<<<grid_for(n), GPU_EW_THREADS, 0, s>>>(d_cells, n, d_ctl);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

int gpu_stats_ring_store(gpu_ctl *d_ctl, const double *d_colsum, int w, gpu_ctl *ctl_ring,
                         double *colsum_ring, int take, unsigned *ctl_of, unsigned cap,
                         unsigned *pos, int pdl, cudaStream_t s, sim_err *err)
{
    /* 512 threads: one load each at the default width, 8 at 4096 columns; the kernel is a few
     * microseconds of latency either way, beside a field pass of the statistics. */
    GPU_CHECK(err, gpu_launch(pdl, st_ring_kernel, 1, 512, 0, s, d_ctl, d_colsum, w, ctl_ring,
                              colsum_ring, take, ctl_of, cap, pos));
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}

int gpu_stats_defer(const gpu_defer *d, int w, int h, int j0, int m, gpu_ctl *ctl_ring,
                    double *colsum_ring, cudaStream_t s, sim_err *err)
{
    if (m <= 0)
        return SIM_OK;
    st_defer_colsum_kernel<<<dim3((unsigned)((w + 31) / 32), (unsigned)m), 32, 0, s>>>(
        d->snap, w, h, d->cells, d->cap, j0, colsum_ring);
    GPU_CHECK_LAUNCH(err, s);
    /* a step's hashing over a few blocks: all m steps' blocks fill the device at once */
    unsigned bx = grid_for((d->cells + 3) / 4);
    if (bx > GPU_ST_DEFER_BLOCKS)
        bx = GPU_ST_DEFER_BLOCKS;
    st_defer_terms_kernel<<<dim3(bx, (unsigned)m), GPU_EW_THREADS, 0, s>>>(
        d->snap, d->asnap, d->cells, d->n, d->cap, j0, d->ctl_of, ctl_ring);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}
