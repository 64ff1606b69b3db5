/* gpu_model_read.cu - the CUDA model engine's reads for the backend table (gpu_model.cu): the
 * output field, agent cells, the whole state, horizon scores, region sums, cells and agents by
 * id, and the paint brush. Each ends synchronised on the instance's stream. */
#include <stdlib.h>
#include <string.h>

#include "gpu_alloc.h"
#include "gpu_check.h"
#include "gpu_model.h"

extern "C" {
#include "sim_alloc.h"
#include "sim_rules.h"
}

int gpu_md_op_read_field(void *p, float *out, sim_err *err)
{
    gpu_model *g = (gpu_model *)p;
    GPU_CHECK(err, cudaMemcpyAsync(out, g->d_field[g->m.output_field],
                                   (size_t)g->cells * sizeof(float), cudaMemcpyDeviceToHost,
                                   g->stream));
    GPU_CHECK(err, cudaStreamSynchronize(g->stream));
    return SIM_OK;
}

int gpu_md_op_read_agents(void *p, uint32_t *cells, sim_err *err)
{
    gpu_model *g = (gpu_model *)p;
    if (g->n == 0)
        return SIM_OK;
    GPU_CHECK(err, cudaMemcpyAsync(cells, g->a[g->cur].cell, (size_t)g->n * sizeof(uint32_t),
                                   cudaMemcpyDeviceToHost, g->stream));
    GPU_CHECK(err, cudaStreamSynchronize(g->stream));
    return SIM_OK;
}

int gpu_md_op_read_state(void *p, sim_state *out, sim_err *err)
{
    gpu_model *g = (gpu_model *)p;
    if (out->cap < g->n)
        return sim_err_set(err, SIM_EINVAL, "read_state: room for %lld agents, %lld live",
                           (long long)out->cap, (long long)g->n);
    const size_t cells = (size_t)g->cells, n = (size_t)g->n;
    cudaStream_t s = g->stream;
    for (int f = 0; f < g->m.n_fields; f++) {
        GPU_CHECK(err, cudaMemcpyAsync(out->field[f], g->d_field[f], cells * sizeof(float),
                                       cudaMemcpyDeviceToHost, s));
        if (out->capacity[f] && g->h_capacity[f])
            memcpy(out->capacity[f], g->h_capacity[f], cells * sizeof(float));
        if (out->sources[f] && g->h_sources[f])
            memcpy(out->sources[f], g->h_sources[f], cells);
    }
    if (out->walls && g->h_walls)
        memcpy(out->walls, g->h_walls, cells);
    if (n) {
        const gpu_md_agents *A = &g->a[g->cur];
        GPU_CHECK(err, cudaMemcpyAsync(out->cell, A->cell, n * 4, cudaMemcpyDeviceToHost, s));
        GPU_CHECK(err, cudaMemcpyAsync(out->id, A->id, n * 4, cudaMemcpyDeviceToHost, s));
        GPU_CHECK(err, cudaMemcpyAsync(out->species, A->species, n, cudaMemcpyDeviceToHost, s));
        if (A->energy) {
            GPU_CHECK(err, cudaMemcpyAsync(out->energy, A->energy, n * 4, cudaMemcpyDeviceToHost,
                                           s));
            GPU_CHECK(err, cudaMemcpyAsync(out->age, A->age, n * 4, cudaMemcpyDeviceToHost, s));
        } else { /* none held: 0 for every agent */
            memset(out->energy, 0, n * sizeof *out->energy);
            memset(out->age, 0, n * sizeof *out->age);
        }
    }
    GPU_CHECK(err, cudaStreamSynchronize(s));
    out->n = g->n;
    out->next_id = g->next_id;
    return SIM_OK;
}

/* The query scratch, grown to at least `bytes` (every call ends synchronised, so the block is
 * free again on return). Sub-arrays start on 256-byte boundaries. */
static int scratch(gpu_model *g, size_t bytes, sim_err *err)
{
    if (bytes <= g->probe_bytes)
        return SIM_OK;
    if (g->d_probe) {
        gpu_alloc_free(g->d_probe);
        g->blocks--;
    }
    g->bytes -= g->probe_bytes;
    g->d_probe = NULL;
    g->probe_bytes = 0;
    GPU_TRY(gpu_model_alloc(g, &g->d_probe, bytes, "query scratch", err));
    g->probe_bytes = bytes;
    return SIM_OK;
}

static size_t align_up(size_t b)
{
    return (b + 255) & ~(size_t)255;
}

int gpu_md_op_horizon(void *p, const uint32_t *cells, int64_t n, int64_t *sums, sim_err *err)
{
    gpu_model *g = (gpu_model *)p;
    for (int64_t i = 0; i < n; i++)
        if ((int64_t)cells[i] >= g->cells)
            return sim_err_set(err, SIM_EINVAL, "horizon: cell %u outside the grid", cells[i]);
    if (n <= 0)
        return SIM_OK;
    const size_t bq = align_up((size_t)n * sizeof(uint32_t));
    const size_t bs = (size_t)n * SIM_NCAND * sizeof(int64_t);
    GPU_TRY(scratch(g, bq + bs, err));
    uint32_t *d_q = (uint32_t *)g->d_probe;
    int64_t *d_s = (int64_t *)((char *)g->d_probe + bq);
    GPU_CHECK(err, cudaMemcpyAsync(d_q, cells, (size_t)n * sizeof(uint32_t),
                                   cudaMemcpyHostToDevice, g->stream));
    GPU_TRY(gpu_md_scores_at(g, 0, d_q, n, d_s, err));
    GPU_CHECK(err, cudaMemcpyAsync(sums, d_s, bs, cudaMemcpyDeviceToHost, g->stream));
    GPU_CHECK(err, cudaStreamSynchronize(g->stream));
    return SIM_OK;
}

int gpu_md_op_paint(void *p, int x, int y, int radius, float amount, sim_err *err)
{
    gpu_model *g = (gpu_model *)p;
    GPU_TRY(gpu_md_paint(g, x, y, radius, amount, err));
    GPU_CHECK(err, cudaStreamSynchronize(g->stream));
    return SIM_OK;
}

int gpu_md_op_region_sums(void *p, const int32_t *xs, int nx, const int32_t *ys, int ny,
                          int64_t *out, sim_err *err)
{
    gpu_model *g = (gpu_model *)p;
    const size_t bx = align_up((size_t)nx * sizeof(int32_t));
    const size_t by = align_up((size_t)ny * sizeof(int32_t));
    const size_t bo = (size_t)nx * (size_t)ny * sizeof(int64_t);
    GPU_TRY(scratch(g, bx + by + bo, err));
    char *base = (char *)g->d_probe;
    int32_t *d_x = (int32_t *)base, *d_y = (int32_t *)(base + bx);
    int64_t *d_o = (int64_t *)(base + bx + by);
    GPU_CHECK(err, cudaMemcpyAsync(d_x, xs, (size_t)nx * sizeof(int32_t), cudaMemcpyHostToDevice,
                                   g->stream));
    GPU_CHECK(err, cudaMemcpyAsync(d_y, ys, (size_t)ny * sizeof(int32_t), cudaMemcpyHostToDevice,
                                   g->stream));
    GPU_TRY(gpu_md_region(g, g->m.species[0].radius, d_x, nx, d_y, ny, d_o, err));
    GPU_CHECK(err, cudaMemcpyAsync(out, d_o, bo, cudaMemcpyDeviceToHost, g->stream));
    GPU_CHECK(err, cudaStreamSynchronize(g->stream));
    return SIM_OK;
}

int gpu_md_op_read_cells(void *p, const uint32_t *cells, int64_t n, float *values,
                         int64_t *agents, sim_err *err)
{
    gpu_model *g = (gpu_model *)p;
    const size_t bq = align_up((size_t)n * sizeof(uint32_t));
    const size_t bv = align_up((size_t)n * sizeof(float));
    const size_t ba = (size_t)n * sizeof(int64_t);
    GPU_TRY(scratch(g, bq + bv + ba, err));
    char *base = (char *)g->d_probe;
    uint32_t *d_q = (uint32_t *)base;
    float *d_v = (float *)(base + bq);
    int64_t *d_a = (int64_t *)(base + bq + bv);
    GPU_CHECK(err, cudaMemcpyAsync(d_q, cells, (size_t)n * sizeof(uint32_t),
                                   cudaMemcpyHostToDevice, g->stream));
    GPU_TRY(gpu_md_read_cells(g, d_q, n, d_v, d_a, err));
    GPU_CHECK(err, cudaMemcpyAsync(values, d_v, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost,
                                   g->stream));
    GPU_CHECK(err, cudaMemcpyAsync(agents, d_a, ba, cudaMemcpyDeviceToHost, g->stream));
    GPU_CHECK(err, cudaStreamSynchronize(g->stream));
    return SIM_OK;
}

int gpu_md_op_agent_cells(void *p, const int64_t *ids, int64_t n, uint32_t *cells, sim_err *err)
{
    gpu_model *g = (gpu_model *)p;
    const size_t bi = align_up((size_t)n * sizeof(int64_t));
    const size_t bc = (size_t)n * sizeof(uint32_t);
    GPU_TRY(scratch(g, bi + bc, err));
    int64_t *d_i = (int64_t *)g->d_probe;
    uint32_t *d_c = (uint32_t *)((char *)g->d_probe + bi);
    GPU_CHECK(err, cudaMemcpyAsync(d_i, ids, (size_t)n * sizeof(int64_t), cudaMemcpyHostToDevice,
                                   g->stream));
    GPU_TRY(gpu_md_agent_cells(g, d_i, n, d_c, err));
    GPU_CHECK(err, cudaMemcpyAsync(cells, d_c, bc, cudaMemcpyDeviceToHost, g->stream));
    GPU_CHECK(err, cudaStreamSynchronize(g->stream));
    return SIM_OK;
}
