/* gpu_view.cu - the viewer's operations on the device state: the paint brush and frame
 * composition (the compose op behind sim_compose) with the per-pixel rule of sim_view.h (the same
 * as the host's sim_view_compose: agents over the field, colormap index from sim_view_index,
 * background outside the world). */
#include <string.h>

#include "gpu_alloc.h"
#include "gpu_check.h"
#include "gpu_policy.h"
#include "gpu_state.h"

extern "C" {
#include "sim_rules.h"
#include "sim_view.h"
}

/* Thread per cell of the brush's bounding box: cells inside the disk and the grid (no wrap,
 * as on the CPU) get amount added. */
__global__ void paint_kernel(float *field, int w, int h, int x, int y, int radius, float amount)
{
    int side = 2 * radius + 1;
    int k = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (k >= side * side)
        return;
    int dx = k % side - radius, dy = k / side - radius;
    int xx = x + dx, yy = y + dy;
    if (dx * dx + dy * dy > radius * radius || xx < 0 || yy < 0 || xx >= w || yy >= h)
        return;
    float *f = &field[(size_t)yy * w + xx];
    *f = SIM_FADD(*f, amount);
}

int gpu_view_paint(gpu_state *st, int x, int y, int radius, float amount, sim_err *err)
{
    if (radius < 0)
        return SIM_OK;
    if (radius > 65535)
        return sim_err_set(err, SIM_EINVAL, "paint: radius %d too large", radius);
    int64_t n = (int64_t)(2 * radius + 1) * (2 * radius + 1);
    paint_kernel<<<(unsigned)((n + GPU_EW_THREADS - 1) / GPU_EW_THREADS), GPU_EW_THREADS, 0,
                   st->stream>>>(st->d_field, st->w, st->h, x, y, radius, amount);
    GPU_CHECK_LAUNCH(err, st->stream);
    GPU_CHECK(err, cudaStreamSynchronize(st->stream));
    return SIM_OK;
}

/* Thread per pixel; the view (with its colormap) travels as a kernel parameter. */
__global__ void compose_kernel(sim_view v, const float *__restrict__ field,
                               const uint32_t *__restrict__ occ, int fw, int fh,
                               float inv, uchar4 *out)
{
    int px = (int)(blockIdx.x * blockDim.x + threadIdx.x), py = (int)blockIdx.y;
    if (px >= v.w)
        return;
    const int layer = v.layer;
    const bool draw_agents = layer == SIM_LAYER_FIELD_AGENTS || layer == SIM_LAYER_AGENTS;
    const uint8_t *col;
    int y = sim_view_sample(v.y0, v.scale, py, fh);
    int x = y < 0 ? -1 : sim_view_sample(v.x0, v.scale, px, fw);
    if (x < 0) {
        col = v.background_rgba;
    } else {
        size_t cell = (size_t)y * (size_t)fw + (size_t)x;
        if (draw_agents && ((occ[cell >> 5] >> (cell & 31)) & 1u))
            col = v.agent_rgba;
        else if (layer != SIM_LAYER_AGENTS)
            col = v.lut + 4 * sim_view_index(field[cell], inv);
        else
            col = v.background_rgba;
    }
    out[(size_t)py * v.w + px] = make_uchar4(col[0], col[1], col[2], col[3]);
}

int gpu_view_compose(gpu_state *st, const sim_view *v, uint8_t *rgba, sim_err *err)
{
    if (v->layer != SIM_LAYER_FIELD_AGENTS && v->layer != SIM_LAYER_FIELD &&
        v->layer != SIM_LAYER_AGENTS)
        return sim_err_set(err, SIM_EINVAL, "compose: layer %d is drawn on the host", v->layer);
    if (v->w <= 0 || v->h <= 0 || v->w > 65535 || v->h > 65535)
        return sim_err_set(err, SIM_EINVAL, "compose: bad image size %dx%d", v->w, v->h);
    size_t bytes = (size_t)v->w * (size_t)v->h * 4;
    if (bytes > st->rgba_bytes) {
        if (st->d_rgba) {
            gpu_alloc_free(st->d_rgba);
            st->bytes -= st->rgba_bytes;
        }
        st->d_rgba = NULL;
        st->rgba_bytes = 0;
        GPU_TRY(gpu_alloc(st, (void **)&st->d_rgba, bytes, "frame", err));
        st->rgba_bytes = bytes;
    }
    float field_max = 0.0f;
    if (v->range_max <= 0.0f && v->layer != SIM_LAYER_AGENTS) {
        GPU_TRY(gpu_ctl_reset(st->d_ctl, st->stream, err));
        GPU_TRY(gpu_stats_max(st->d_field, st->cells, st->d_ctl, st->stream, err));
        GPU_CHECK(err, cudaMemcpyAsync(&st->h_pin->ctl, st->d_ctl, sizeof(gpu_ctl),
                                       cudaMemcpyDeviceToHost, st->stream));
        GPU_CHECK(err, cudaStreamSynchronize(st->stream));
        /* As sim_view_field_max: 0 when no cell is a number. */
        field_max = st->h_pin->ctl.max_key ? gpu_float_from_key(st->h_pin->ctl.max_key) : 0.0f;
    }
    float inv = sim_view_inv(v->range_max, field_max);
    dim3 grid((unsigned)((v->w + GPU_EW_THREADS - 1) / GPU_EW_THREADS), (unsigned)v->h);
    compose_kernel<<<grid, GPU_EW_THREADS, 0, st->stream>>>(*v, st->d_field, st->d_occ, st->w,
                                                            st->h, inv, (uchar4 *)st->d_rgba);
    GPU_CHECK_LAUNCH(err, st->stream);
    GPU_CHECK(err, cudaMemcpyAsync(rgba, st->d_rgba, bytes, cudaMemcpyDeviceToHost, st->stream));
    GPU_CHECK(err, cudaStreamSynchronize(st->stream));
    return SIM_OK;
}
