/* gpu_model_fields.cu - phase 9 of a model step on the device (per field: growth, Jacobi sweeps,
 * decay, sources held), the statistics of a model state, and the element-wise reads and writes
 * behind paint, read_cells and agent_cells.
 *
 * A field of a model without walls and without sources diffuses through the fast path's Jacobi
 * kernels (gpu_jacobi.h: fused sweeps, decay folded into the last pass): sim_model_cpu.c runs
 * sim_diffuse_sweep for it, which those kernels match bit for bit. Walls or sources take
 * md_sweep_kernel, one sweep per pass, sim_model_cpu.c's sweep_walls cell by cell (a wall
 * neighbour gives the cell's own value, walls stay 0, sources take their value), with decay and
 * the sources folded into the last sweep. Growth (and, without sweeps, decay and sources) is one
 * element-wise pass, md_point_kernel. Each pass is memory-bound: 8 B/cell (+4 with a capacity
 * map, +4 for walls (the occupancy word's code), +1 for sources).
 *
 * Statistics: the fast path's field kernel (column sums in row order, max, checksum terms of
 * field f's cells at f * cells) per field, and md_agents_kernel for the agents' checksum terms and
 * energy sums, all integer or ordered, so that they equal fill_stats' bits. */
#include <math.h>

#include "gpu_check.h"
#include "gpu_model.h"
#include "gpu_policy.h"
#include "gpu_stats.cuh"

extern "C" {
#include "sim_model_rules.h"
#include "sim_rules.h"
}

#define FULL_MASK 0xffffffffu

static unsigned ew_blocks(int64_t n)
{
    int64_t b = (n + GPU_MD_EW_THREADS - 1) / GPU_MD_EW_THREADS;
    if (b > 4096)
        b = 4096; /* grid-stride beyond a few waves */
    return (unsigned)(b > 0 ? b : 1);
}

/* ---- Growth, decay, sources ---- */

typedef struct md_point_args {
    float *t;
    const float *cap;   /* NULL: cap_const */
    float cap_const, growth, keep, source_value;
    const uint32_t *occ; /* occupancy words, for the walls (NULL: none) */
    const uint8_t *src;  /* sources held (NULL: none) */
    int grow, decay;
    int64_t cells;
    const unsigned *halt; /* non-zero: the step does nothing (gpu_model.h) */
} md_point_args;

/* Grid-stride over cells: growth on non-wall cells, then decay, then sources, in this order. */
__global__ void md_point_kernel(md_point_args a)
{
    if (*a.halt)
        return;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.cells;
         i += (int64_t)gridDim.x * blockDim.x) {
        float v = a.t[i];
        if (a.grow && !(a.occ && gpu_md_code(a.occ[i]) == GPU_MD_WALL))
            v = sim_grow(v, a.growth, a.cap ? a.cap[i] : a.cap_const);
        if (a.decay)
            v = SIM_FMUL(v, a.keep);
        if (a.src && a.src[i])
            v = a.source_value;
        a.t[i] = v;
    }
}

/* ---- A sweep with walls and sources ---- */

typedef struct md_sweep_args {
    const float *src;
    float *dst;
    const uint32_t *occ;  /* occupancy words, for the walls (NULL: none) */
    const uint8_t *smask; /* sources (NULL: none) */
    float source_value, a, om, keep;
    float fixed[4];       /* n, s, e, w */
    int w, h, boundary;
    int last, decay;      /* the last sweep then decays (decay) and holds the sources again, as
                           * the CPU's passes after the sweeps do (a wall can be a source) */
    unsigned *residual;   /* NULL: not wanted */
    const unsigned *halt; /* non-zero: the step does nothing (gpu_model.h) */
} md_sweep_args;

/* Thread mapping: one thread per cell, 2D blocks of 32 x 8; neighbours from global memory (L1
 * hits). The residual: warp max, one atomicMax of the float bits per warp. */
__global__ void md_sweep_kernel(md_sweep_args p)
{
    if (*p.halt)
        return; /* the whole grid */
    const int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    float d = 0.0f;
    if (x < p.w && y < p.h) {
        const size_t i = (size_t)y * p.w + x;
        const float c = p.src[i];
        float v;
        if (p.occ && gpu_md_code(p.occ[i]) == GPU_MD_WALL) {
            v = 0.0f;
        } else {
            const int dx[4] = {0, 0, 1, -1}, dy[4] = {-1, 1, 0, 0};
            float nb[4];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                int xx = x + dx[k], yy = y + dy[k];
                if (xx < 0 || xx >= p.w || yy < 0 || yy >= p.h) {
                    if (p.boundary == SIM_BOUNDARY_PERIODIC) {
                        xx = xx < 0 ? xx + p.w : xx >= p.w ? xx - p.w : xx;
                        yy = yy < 0 ? yy + p.h : yy >= p.h ? yy - p.h : yy;
                    } else {
                        nb[k] = p.boundary == SIM_BOUNDARY_WALL ? c : p.fixed[k];
                        continue;
                    }
                }
                const size_t j = (size_t)yy * p.w + xx;
                nb[k] = p.occ && gpu_md_code(p.occ[j]) == GPU_MD_WALL ? c : p.src[j];
            }
            v = sim_jacobi(c, nb[0], nb[1], nb[2], nb[3], p.a, p.om);
            if (p.smask && p.smask[i])
                v = p.source_value;
            if (p.residual) {
                float r = fabsf(SIM_FSUB(v, c));
                if (r > d)
                    d = r;
            }
        }
        if (p.last && p.decay)
            v = SIM_FMUL(v, p.keep);
        if (p.last && p.smask && p.smask[i])
            v = p.source_value;
        p.dst[i] = v;
    }
    if (p.residual) {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            float t = __shfl_xor_sync(FULL_MASK, d, o);
            d = t > d ? t : d;
        }
        if ((threadIdx.x & 31) == 0 && d > 0.0f)
            atomicMax(p.residual, __float_as_uint(d));
    }
}

static int point_pass(gpu_model *g, int f, int grow, int decay, int src, sim_err *err)
{
    const sim_model_field *mf = &g->m.field[f];
    md_point_args a;
    memset(&a, 0, sizeof a);
    a.t = g->d_field[f];
    a.cap = g->d_cap[f];
    a.cap_const = g->cap_const[f];
    a.growth = mf->growth;
    a.keep = g->jac[f].keep;
    a.source_value = mf->source_value;
    a.occ = g->m.walls ? g->d_occ : NULL;
    a.src = src ? g->d_src[f] : NULL;
    a.grow = grow;
    a.decay = decay;
    a.cells = g->cells;
    a.halt = &g->d_run->halt;
    md_point_kernel<<<ew_blocks(g->cells), GPU_MD_EW_THREADS, 0, g->stream>>>(a);
    GPU_CHECK_LAUNCH(err, g->stream);
    return SIM_OK;
}

static int wall_sweeps(gpu_model *g, int f, int want_residual, sim_err *err)
{
    const sim_model_field *mf = &g->m.field[f];
    const gpu_jac *j = &g->jac[f];
    md_sweep_args p;
    memset(&p, 0, sizeof p);
    p.occ = g->m.walls ? g->d_occ : NULL;
    p.smask = g->d_src[f];
    p.source_value = mf->source_value;
    p.a = j->a;
    p.om = j->one_minus_a;
    p.keep = j->keep;
    p.fixed[0] = j->fixed_top;
    p.fixed[1] = j->fixed_bottom;
    p.fixed[2] = j->fixed_right;
    p.fixed[3] = j->fixed_left;
    p.w = j->w;
    p.h = j->h;
    p.boundary = j->boundary;
    p.halt = &g->d_run->halt;
    const dim3 block(32, 8), grid((unsigned)((p.w + 31) / 32), (unsigned)((p.h + 7) / 8));
    for (int k = 0; k < mf->sweeps; k++) {
        const int last = k == mf->sweeps - 1;
        p.src = g->d_field[f];
        p.dst = g->d_spare;
        p.residual = last && want_residual ? &g->d_fctl[f].residual : NULL;
        /* the CPU's decay pass and source pass after the sweeps, folded into the last one */
        p.last = last;
        p.decay = mf->decay > 0.0f;
        md_sweep_kernel<<<grid, block, 0, g->stream>>>(p);
        GPU_CHECK_LAUNCH(err, g->stream);
        g->d_spare = g->d_field[f];
        g->d_field[f] = p.dst;
    }
    return SIM_OK;
}

int gpu_md_fields(gpu_model *g, int want_residual, sim_err *err)
{
    for (int f = 0; f < g->m.n_fields; f++) {
        const sim_model_field *mf = &g->m.field[f];
        const int grow = mf->growth > 0.0f, decay = mf->decay > 0.0f;
        const int walls = g->m.walls != NULL || g->d_src[f] != NULL;
        if (mf->sweeps <= 0) {
            if (grow || decay || g->d_src[f])
                GPU_TRY(point_pass(g, f, grow, decay, 1, err));
            continue;
        }
        if (grow)
            GPU_TRY(point_pass(g, f, 1, 0, 0, err));
        if (walls) {
            GPU_TRY(wall_sweeps(g, f, want_residual, err));
        } else {
            GPU_TRY(gpu_jacobi_run(&g->jac[f], &g->d_field[f], &g->d_spare, mf->sweeps, 0, decay,
                                   want_residual ? &g->d_fctl[f].residual : NULL, g->stream,
                                   err));
        }
    }
    return SIM_OK;
}

/* ---- Statistics ---- */

/* Grid-stride over the agents: checksum terms (with the life term for extended models) and the
 * energy sums per species; a block reduces in shared memory, then one atomic per result. */
__global__ void md_agents_kernel(gpu_md_agents A0, gpu_md_agents A1, int64_t n_host,
                                 const gpu_md_run *run, const uint8_t *__restrict__ dead,
                                 int extended, gpu_md_ctl *ctl)
{
    __shared__ unsigned long long s_cs[GPU_MD_EW_THREADS / 32];
    __shared__ unsigned long long s_e[SIM_MAX_SPECIES];
    if (threadIdx.x < SIM_MAX_SPECIES)
        s_e[threadIdx.x] = 0;
    __syncthreads();
    /* after a step's scatter: its slots, and its set (the commit flips cur after this) */
    const int64_t n = run ? (int64_t)ctl->n : n_host;
    const gpu_md_agents A = run && (run->cur ^ (unsigned)ctl->compacted) ? A1 : A0;
    unsigned long long cs = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        if (dead && dead[i] == GPU_MD_HOLE)
            continue;
        const uint32_t id = A.id[i];
        const float e = A.energy ? A.energy[i] : 0.0f; /* none held: all 0 */
        const unsigned sp = A.species[i];
        cs += sim_checksum_agent(id, A.cell[i]);
        if (extended)
            cs += sim_checksum_life(id, sp, __float_as_uint(e), A.age ? A.age[i] : 0);
        const int64_t ef = sim_energy_fix(e);
        if (ef)
            atomicAdd(&s_e[sp], (unsigned long long)ef); /* two's complement: exact mod 2^64 */
    }
    cs = gpu_warp_sum64(cs);
    if ((threadIdx.x & 31) == 0)
        s_cs[threadIdx.x >> 5] = cs;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long t = 0;
        for (int k = 0; k < (int)(blockDim.x >> 5); k++)
            t += s_cs[k];
        if (t)
            atomicAdd(&ctl->checksum, t);
    }
    if (threadIdx.x < SIM_MAX_SPECIES && s_e[threadIdx.x])
        atomicAdd(&ctl->energy[threadIdx.x], s_e[threadIdx.x]);
}

int gpu_md_stats(gpu_model *g, int after_life, int64_t bound, sim_err *err)
{
    for (int f = 0; f < g->m.n_fields; f++)
        GPU_TRY(gpu_stats_field_at(g->d_field[f], g->p.w, g->p.h, (uint64_t)f * (uint64_t)g->cells,
                                   g->d_colsum + (size_t)f * g->p.w, &g->d_fctl[f], g->stream,
                                   err));
    if (bound <= 0)
        return SIM_OK;
    /* between chunks a[g->cur]; inside one the device's choice, a[1] only with two sets */
    const gpu_md_agents A0 = after_life ? g->a[0] : g->a[g->cur];
    const gpu_md_agents A1 = after_life && g->sets > 1 ? g->a[1] : A0;
    md_agents_kernel<<<ew_blocks(bound), GPU_MD_EW_THREADS, 0, g->stream>>>(
        A0, A1, g->n, after_life ? g->d_run : NULL, after_life ? g->d_dead : NULL,
        g->p.extended, g->d_ctl);
    GPU_CHECK_LAUNCH(err, g->stream);
    return SIM_OK;
}

/* ---- Paint and the reads ---- */

__global__ void md_paint_kernel(float *t, const uint32_t *occ, int w, int h, int x, int y,
                                int radius, float amount)
{
    const int side = 2 * radius + 1;
    const int64_t it = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (it >= (int64_t)side * side)
        return;
    const int dy = (int)(it / side) - radius, dx = (int)(it % side) - radius;
    const int xx = x + dx, yy = y + dy;
    if (dx * dx + dy * dy > radius * radius || xx < 0 || yy < 0 || xx >= w || yy >= h)
        return;
    const size_t i = (size_t)yy * w + xx;
    if (!(occ && gpu_md_code(occ[i]) == GPU_MD_WALL))
        t[i] = SIM_FADD(t[i], amount);
}

int gpu_md_paint(gpu_model *g, int x, int y, int radius, float amount, sim_err *err)
{
    if (radius < 0)
        return SIM_OK;
    const int64_t side = 2 * (int64_t)radius + 1;
    md_paint_kernel<<<(unsigned)((side * side + GPU_MD_EW_THREADS - 1) / GPU_MD_EW_THREADS),
                      GPU_MD_EW_THREADS, 0, g->stream>>>(g->d_field[g->m.output_field],
                                                         g->m.walls ? g->d_occ : NULL, g->p.w,
                                                         g->p.h, x, y, radius, amount);
    GPU_CHECK_LAUNCH(err, g->stream);
    return SIM_OK;
}

__global__ void md_read_cells_kernel(const float *__restrict__ f, const uint32_t *__restrict__ occ,
                                     const uint32_t *__restrict__ cells, int64_t n,
                                     float *values, int64_t *agents)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const uint32_t c = cells[i];
        const uint32_t o = occ[c];
        values[i] = f[c];
        agents[i] = gpu_md_code(o) < SIM_MAX_SPECIES ? (int64_t)gpu_md_index(o) : -1;
    }
}

int gpu_md_read_cells(gpu_model *g, const uint32_t *d_cells, int64_t n, float *d_values,
                      int64_t *d_agents, sim_err *err)
{
    md_read_cells_kernel<<<ew_blocks(n), GPU_MD_EW_THREADS, 0, g->stream>>>(
        g->d_field[g->m.output_field], g->d_occ, d_cells, n, d_values, d_agents);
    GPU_CHECK_LAUNCH(err, g->stream);
    return SIM_OK;
}

__global__ void md_agent_cells_kernel(const uint32_t *__restrict__ cell,
                                      const int64_t *__restrict__ ids, int64_t n, uint32_t *out)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        out[i] = cell[ids[i]];
}

int gpu_md_agent_cells(gpu_model *g, const int64_t *d_ids, int64_t n, uint32_t *d_out,
                       sim_err *err)
{
    md_agent_cells_kernel<<<ew_blocks(n), GPU_MD_EW_THREADS, 0, g->stream>>>(
        g->a[g->cur].cell, d_ids, n, d_out);
    GPU_CHECK_LAUNCH(err, g->stream);
    return SIM_OK;
}
