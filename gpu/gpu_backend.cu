/* gpu_backend.cu - the CUDA backend table: create/destroy, step, reads, checksum, horizon sums,
 * paint, compose, the viewer's reads and tuning, all on one instance's stream. The C entry points
 * at the edge of gpu/; the work is in gpu_step.cu, gpu_horizon.cu, gpu_jacobi.cu, gpu_stats.cu,
 * gpu_view.cu, gpu_probe.cu. */
#include <stdlib.h>
#include <string.h>

#include "gpu_alloc.h"
#include "gpu_check.h"
#include "gpu_policy.h"
#include "gpu_probe.h"
#include "gpu_state.h"
#include "gpu_world.h"

extern "C" {
#include "sim_alloc.h"
#include "sim_impl.h"
#include "sim_rules.h"
}

int gpu_alloc(gpu_state *st, void **p, size_t bytes, const char *what, sim_err *err)
{
    GPU_TRY(gpu_alloc_device(p, bytes, what, err));
    st->bytes += bytes ? bytes : 1;
    return SIM_OK;
}

static void gpu_destroy(void *p)
{
    gpu_state *st = (gpu_state *)p;
    if (!st)
        return;
    gpu_step_forget(st);
    gpu_step_free(st);
    gpu_step_rings_free(st);
    /* Also the path out of a create that failed half way: every pointer is NULL or allocated. */
    gpu_alloc_free(st->d_buf[0]);
    gpu_alloc_free(st->d_buf[1]);
    gpu_alloc_free(st->d_claim);
    gpu_alloc_free(st->d_cells);
    gpu_alloc_free(st->d_target);
    gpu_alloc_free(st->d_key);
    gpu_alloc_free(st->d_colsum);
    gpu_alloc_free(st->d_ctl);
    gpu_alloc_free(st->d_rgba);
    gpu_probe_free(st);
    gpu_alloc_free_pinned(st->h_pin);
    gpu_alloc_free_pinned(st->h_colsum);
    if (st->stream)
        cudaStreamDestroy(st->stream);
    sim_free(st);
}

/* Derives the horizon plan from the tuning (mode, mapping) and drops captured graphs. */
static int replan(gpu_state *st, sim_err *err)
{
    gpu_step_forget(st);
    int mode = gpu_hz_choose_mode(&st->geom, st->n, st->tune.horizon_mode);
    int mapping = st->tune.mapping;
    if (mapping == GPU_MAP_AUTO)
        GPU_TRY(gpu_hz_auto_mapping(&mapping, err));
    GPU_TRY(gpu_hz_plan_make(&st->geom, mode, mapping, &st->plan, err));
    GPU_TRY(gpu_step_pdl_choose(st, err));
    GPU_TRY(gpu_step_defer_choose(st, err));
    return gpu_step_resident_plan(st, err);
}

static int check_fits(const sim_scenario *sc, sim_err *err)
{
    size_t need = gpu_estimate_bytes(sc), free_b = 0, total_b = 0;
    GPU_CHECK(err, cudaMemGetInfo(&free_b, &total_b));
    if (need > free_b)
        return sim_err_set(err, SIM_EDEVMEM,
                           "out of device memory: a %dx%d world with %lld agents needs %zu bytes "
                           "(%.1f MiB), %zu bytes (%.1f MiB) free (try a smaller world or "
                           "--backend cpu)",
                           sc->width, sc->height, (long long)sim_scenario_agent_count(sc), need,
                           need / 1048576.0, free_b, free_b / 1048576.0);
    return SIM_OK;
}

/* The initial world of sim_world_init (random placement) built on the device, in the buffers
 * create allocated, before they are cleared: the claim words (8 B/cell) hold the shuffle's
 * candidates and reservations, the keys (8 B/agent) its windows, the targets its partners, the
 * control block's and its read-back's `moved` the rounds' counts. */
static int world_on_device(gpu_state *st, sim_err *err)
{
    GPU_TRY(gpu_world_field(&st->sc, st->d_buf[0], st->stream, err));
    if (st->n == 0)
        return SIM_OK;
    uint32_t *cand = (uint32_t *)st->d_claim, *resv = cand + st->cells;
    GPU_TRY(gpu_world_place((unsigned long long)st->sc.seed, st->cells, st->n, cand, resv,
                            (uint32_t *)st->d_key, st->d_target, &st->d_ctl->moved,
                            &st->h_pin->ctl.moved, st->stream, err));
    GPU_CHECK(err, cudaMemcpyAsync(st->d_cells, cand, (size_t)st->n * sizeof(uint32_t),
                                   cudaMemcpyDeviceToDevice, st->stream));
    return SIM_OK;
}

/* field and agents: the initial state to upload, or NULL: built on the device (create_fresh). */
static int create_inner(gpu_state *st, const float *field, const uint32_t *agents, sim_err *err)
{
    const size_t cells = (size_t)st->cells, n = (size_t)st->n;
    GPU_TRY(check_fits(&st->sc, err));
    GPU_CHECK(err, cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking));
    GPU_TRY(gpu_jacobi_init(err));
    GPU_TRY(gpu_alloc(st, (void **)&st->d_buf[0], cells * sizeof(float), "field", err));
    GPU_TRY(gpu_alloc(st, (void **)&st->d_buf[1], cells * sizeof(float), "field", err));
    GPU_TRY(gpu_alloc(st, (void **)&st->d_claim, cells * sizeof(unsigned long long), "claims",
                      err));
    /* the column sums, then a fused pass's (gpu_step_colpart), which start zero */
    GPU_TRY(gpu_alloc(st, (void **)&st->d_colsum, gpu_step_colsum_len(st->w) * sizeof(double),
                      "colsum", err));
    GPU_CHECK(err, cudaMemsetAsync(st->d_colsum, 0, gpu_step_colsum_len(st->w) * sizeof(double),
                                   st->stream));
    GPU_TRY(gpu_alloc(st, (void **)&st->d_ctl, sizeof(gpu_ctl), "control", err));
    GPU_TRY(gpu_alloc(st, (void **)&st->d_cells, (n ? n : 1) * sizeof(uint32_t), "agents", err));
    GPU_TRY(gpu_alloc(st, (void **)&st->d_target, (n ? n : 1) * sizeof(uint32_t), "agents", err));
    GPU_TRY(gpu_alloc(st, (void **)&st->d_key, (n ? n : 1) * sizeof(unsigned long long),
                      "agents", err));
    GPU_TRY(gpu_step_alloc(st, err));
    GPU_TRY(gpu_step_rings_alloc(st, err));
    GPU_TRY(gpu_alloc_pinned((void **)&st->h_pin, sizeof(gpu_pinned), "control readback", err));
    GPU_TRY(gpu_alloc_pinned((void **)&st->h_colsum, (size_t)st->w * sizeof(double),
                             "column sums readback", err));

    if (field) {
        GPU_CHECK(err, cudaMemcpyAsync(st->d_buf[0], field, cells * sizeof(float),
                                       cudaMemcpyHostToDevice, st->stream));
        if (n)
            GPU_CHECK(err, cudaMemcpyAsync(st->d_cells, agents, n * sizeof(uint32_t),
                                           cudaMemcpyHostToDevice, st->stream));
    } else {
        GPU_TRY(world_on_device(st, err));
    }
    memset(st->h_pin, 0, sizeof *st->h_pin);
    GPU_CHECK(err, cudaMemsetAsync(st->d_buf[1], 0, cells * sizeof(float), st->stream));
    GPU_CHECK(err, cudaMemsetAsync(st->d_ctl, 0, sizeof(gpu_ctl), st->stream));
    GPU_CHECK(err, cudaMemsetAsync(st->d_target, 0, (n ? n : 1) * sizeof(uint32_t), st->stream));
    GPU_CHECK(err, cudaMemsetAsync(st->d_key, 0, (n ? n : 1) * sizeof(unsigned long long),
                                   st->stream));
    st->d_field = st->d_buf[0];
    st->d_spare = st->d_buf[1];
    GPU_TRY(gpu_step_mark(st, err));
    GPU_TRY(replan(st, err));
    GPU_CHECK(err, cudaStreamSynchronize(st->stream));
    return SIM_OK;
}

/* An instance from the state (field, agents), or with field NULL from the scenario alone. */
static int make_instance(const sim_scenario *sc, const float *field, const uint32_t *agents,
                         int64_t n_agents, void **out, sim_err *err)
{
    *out = NULL;
    char why[256];
    if (gpu_probe(why, sizeof why) <= 0)
        return sim_err_set(err, SIM_ENODEV, "cuda backend: %s", why);
    /* Host memory through sim_alloc, so that its failure sweeps reach the backend too. */
    gpu_state *st = (gpu_state *)sim_calloc(1, sizeof *st);
    if (!st)
        return sim_err_set(err, SIM_ENOMEM, "cuda backend: out of host memory");
    st->sc = *sc;
    st->w = sc->width;
    st->h = sc->height;
    st->periodic = sc->boundary == SIM_BOUNDARY_PERIODIC;
    st->cells = (int64_t)sc->width * sc->height;
    st->n = n_agents;
    st->threshold = sim_noise_threshold(sc->noise);
    gpu_jac_from_scenario(sc, &st->jac);
    gpu_hz_geometry(st->w, st->h, st->periodic, sc->radius, &st->geom);
    cudaGetDevice(&st->device);
    int rc = create_inner(st, field, agents, err);
    if (rc != SIM_OK) {
        gpu_destroy(st);
        return rc;
    }
    *out = st;
    return SIM_OK;
}

static int gpu_create(const sim_scenario *sc, const float *field, const uint32_t *agents,
                      int64_t n_agents, int threads, void **out, sim_err *err)
{
    (void)threads; /* the device decides its own parallelism */
    if (!field)
        return sim_err_set(err, SIM_EINVAL, "cuda backend: create without a state");
    return make_instance(sc, field, agents, n_agents, out, err);
}

/* The initial world on the device (gpu_world.h): random placement only (sim_backend.h). */
static int gpu_create_fresh(const sim_scenario *sc, int threads, void **out, sim_err *err)
{
    (void)threads; /* the device decides its own parallelism */
    return make_instance(sc, NULL, NULL, sim_scenario_agent_count(sc), out, err);
}

static int gpu_step(void *p, int64_t step, int want_stats, sim_stats *st, sim_err *err)
{
    gpu_state *s = (gpu_state *)p;
    GPU_TRY(gpu_step_run(s, step, want_stats, st, err));
    st->step = step + 1;
    st->agents = s->n;
    return SIM_OK;
}

static int gpu_step_batch_op(void *p, int64_t step, int n, const uint8_t *want_stats,
                             sim_stats *out, sim_err *err)
{
    gpu_state *s = (gpu_state *)p;
    GPU_TRY(gpu_step_batch(s, step, n, want_stats, out, err));
    for (int k = 0; k < n; k++) {
        out[k].step = step + k + 1;
        out[k].agents = s->n;
    }
    return SIM_OK;
}

static int gpu_read_field(void *p, float *out, sim_err *err)
{
    gpu_state *st = (gpu_state *)p;
    GPU_CHECK(err, cudaMemcpyAsync(out, st->d_field, (size_t)st->cells * sizeof(float),
                                   cudaMemcpyDeviceToHost, st->stream));
    GPU_CHECK(err, cudaStreamSynchronize(st->stream));
    return SIM_OK;
}

/* The snapshot, stream and events of the reads beside the steps, made at the first begin. Each
 * piece is made only while missing, so that a begin after a failed one (a plain read then)
 * completes the set instead of making again, and leaking, what the failed one had made;
 * gpu_step_free releases whatever exists. */
static int read_aside_init(gpu_state *st, sim_err *err)
{
    if (!st->d_snap)
        GPU_TRY(gpu_alloc(st, (void **)&st->d_snap, (size_t)st->cells * sizeof(float),
                          "field snapshot", err));
    cudaEvent_t *evs[4] = {&st->ev_at, &st->ev_snap, &st->ev_read[0], &st->ev_read[1]};
    for (int i = 0; i < 4; i++)
        if (!*evs[i])
            GPU_CHECK(err, cudaEventCreateWithFlags(evs[i], cudaEventDisableTiming));
    if (!st->copy)
        GPU_CHECK(err, cudaStreamCreateWithFlags(&st->copy, cudaStreamNonBlocking));
    return SIM_OK;
}

/* The table's read_field_begin: the field copied on the device into the snapshot (the steps
 * queued after the begin wait for that ~20 us copy only), then from the snapshot to the host
 * while they run. The copy stream runs in order, so a begin's snapshot also waits for the
 * previous begin's copy to the host, and a ticket's event recorded again by a later begin
 * marks a later point of that stream: waiting for it still waits for the ticket's copy.
 * Without the device memory for a snapshot it reads as read_field does (ticket -1). */
static int gpu_read_field_begin(void *p, float *out, int *ticket, sim_err *err)
{
    gpu_state *st = (gpu_state *)p;
    *ticket = -1;
    sim_err quiet; /* no snapshot only means the read waits */
    if (st->cells == 0 || read_aside_init(st, &quiet) != SIM_OK)
        return gpu_read_field(p, out, err);
    const size_t bytes = (size_t)st->cells * sizeof(float);
    const int t = (int)(st->reads++ % 2);
    GPU_CHECK(err, cudaEventRecord(st->ev_at, st->stream));
    GPU_CHECK(err, cudaStreamWaitEvent(st->copy, st->ev_at, 0));
    GPU_CHECK(err, cudaMemcpyAsync(st->d_snap, st->d_field, bytes, cudaMemcpyDeviceToDevice,
                                   st->copy));
    GPU_CHECK(err, cudaEventRecord(st->ev_snap, st->copy));
    GPU_CHECK(err, cudaStreamWaitEvent(st->stream, st->ev_snap, 0));
    GPU_CHECK(err, cudaMemcpyAsync(out, st->d_snap, bytes, cudaMemcpyDeviceToHost, st->copy));
    GPU_CHECK(err, cudaEventRecord(st->ev_read[t], st->copy));
    *ticket = t;
    return SIM_OK;
}

/* The table's read_wait; another thread may call it, so it names the device first. */
static int gpu_read_wait(void *p, int ticket, sim_err *err)
{
    gpu_state *st = (gpu_state *)p;
    if (ticket < 0 || ticket > 1)
        return SIM_OK;
    GPU_CHECK(err, cudaSetDevice(st->device));
    GPU_CHECK(err, cudaEventSynchronize(st->ev_read[ticket]));
    return SIM_OK;
}

/* The table's pin_host and unpin_host: page-locking through the runtime; a refusal (no room
 * for locked pages, a range already registered) is cleared and leaves the buffer as it was. */
static int gpu_pin_host(void *p, size_t bytes)
{
    if (cudaHostRegister(p, bytes, cudaHostRegisterDefault) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return 1;
}

static void gpu_unpin_host(void *p)
{
    if (cudaHostUnregister(p) != cudaSuccess)
        cudaGetLastError();
}

static int gpu_read_agents(void *p, uint32_t *cells, sim_err *err)
{
    gpu_state *st = (gpu_state *)p;
    if (st->n == 0)
        return SIM_OK;
    GPU_CHECK(err, cudaMemcpyAsync(cells, st->d_cells, (size_t)st->n * sizeof(uint32_t),
                                   cudaMemcpyDeviceToHost, st->stream));
    GPU_CHECK(err, cudaStreamSynchronize(st->stream));
    return SIM_OK;
}

static int gpu_checksum(void *p, uint64_t *out, sim_err *err)
{
    gpu_state *st = (gpu_state *)p;
    GPU_TRY(gpu_ctl_reset(st->d_ctl, st->stream, err));
    GPU_TRY(gpu_stats_field(st->d_field, st->w, st->h, st->d_colsum, st->d_ctl, st->stream, err));
    GPU_TRY(gpu_stats_agents(st->d_cells, st->n, st->d_ctl, st->stream, err));
    GPU_CHECK(err, cudaMemcpyAsync(&st->h_pin->ctl, st->d_ctl, sizeof(gpu_ctl),
                                   cudaMemcpyDeviceToHost, st->stream));
    GPU_CHECK(err, cudaStreamSynchronize(st->stream));
    *out = st->h_pin->ctl.checksum;
    return SIM_OK;
}

/* Sums for arbitrary cells (tests, viewer): binned and summed by the same tile kernel as the
 * step, in the instance's mode. Scratch is sized by n and freed before returning; the step never
 * comes here. */
static int horizon_inner(gpu_state *st, const uint32_t *cells, int64_t n, int64_t *sums,
                         uint32_t **d_q, int64_t **d_s, gpu_bins *bins, sim_err *err)
{
    GPU_TRY(gpu_alloc(st, (void **)d_q, (size_t)n * sizeof(uint32_t), "horizon queries", err));
    GPU_TRY(gpu_alloc(st, (void **)d_s, (size_t)n * SIM_NCAND * sizeof(int64_t), "horizon sums",
                      err));
    GPU_TRY(gpu_bins_alloc(bins, n, st->geom.ntiles, err));
    GPU_CHECK(err, cudaMemcpyAsync(*d_q, cells, (size_t)n * sizeof(uint32_t),
                                   cudaMemcpyHostToDevice, st->stream));
    GPU_TRY(gpu_bins_build(bins, &st->geom, *d_q, n, st->stream, err));
    GPU_TRY(gpu_hz_sums(&st->plan, bins, st->d_field, *d_q, *d_s, &st->d_ctl->queue, st->stream,
                        err));
    GPU_CHECK(err, cudaMemcpyAsync(sums, *d_s, (size_t)n * SIM_NCAND * sizeof(int64_t),
                                   cudaMemcpyDeviceToHost, st->stream));
    GPU_CHECK(err, cudaStreamSynchronize(st->stream));
    return SIM_OK;
}

static int gpu_horizon(void *p, const uint32_t *cells, int64_t n, int64_t *sums, sim_err *err)
{
    gpu_state *st = (gpu_state *)p;
    for (int64_t i = 0; i < n; i++)
        if ((int64_t)cells[i] >= st->cells)
            return sim_err_set(err, SIM_EINVAL, "horizon: cell %u outside the grid", cells[i]);
    if (n <= 0)
        return SIM_OK;
    uint32_t *d_q = NULL;
    int64_t *d_s = NULL;
    gpu_bins bins;
    memset(&bins, 0, sizeof bins);
    size_t before = st->bytes;
    int rc = horizon_inner(st, cells, n, sums, &d_q, &d_s, &bins, err);
    gpu_bins_free(&bins);
    gpu_alloc_free(d_q);
    gpu_alloc_free(d_s);
    st->bytes = before;
    return rc;
}

static int gpu_paint(void *p, int x, int y, int radius, float amount, sim_err *err)
{
    return gpu_view_paint((gpu_state *)p, x, y, radius, amount, err);
}

static int gpu_compose(void *p, const sim_view *view, uint8_t *rgba, sim_err *err)
{
    return gpu_view_compose((gpu_state *)p, view, rgba, err);
}

static int gpu_region_sums(void *p, const int32_t *xs, int nx, const int32_t *ys, int ny,
                           int64_t *out, sim_err *err)
{
    return gpu_probe_region_sums((gpu_state *)p, xs, nx, ys, ny, out, err);
}

static int gpu_read_cells(void *p, const uint32_t *cells, int64_t n, float *values,
                          int64_t *agents, sim_err *err)
{
    return gpu_probe_read_cells((gpu_state *)p, cells, n, values, agents, err);
}

static int gpu_agent_cells(void *p, const int64_t *ids, int64_t n, uint32_t *cells,
                           sim_err *err)
{
    return gpu_probe_agent_cells((gpu_state *)p, ids, n, cells, err);
}

/* The table, member by member: designated initializers are C++20 and this code is C++17 (the
 * CUDA standard in CMakeLists.txt). constexpr keeps it a constant, built at compile time like
 * sim_cpu.c's designated initializer, so no static constructor runs and no order of
 * initialisation matters. */
static constexpr sim_backend_ops make_cuda_ops()
{
    sim_backend_ops o = {};
    o.version = SIM_BACKEND_VERSION;
    o.name = "cuda";
    o.create = gpu_create;
    o.create_fresh = gpu_create_fresh;
    o.pin_host = gpu_pin_host;
    o.unpin_host = gpu_unpin_host;
    o.destroy = gpu_destroy;
    o.step = gpu_step;
    o.step_batch = gpu_step_batch_op;
    o.read_field = gpu_read_field;
    o.read_field_begin = gpu_read_field_begin;
    o.read_wait = gpu_read_wait;
    o.read_agents = gpu_read_agents;
    o.checksum = gpu_checksum;
    o.horizon = gpu_horizon;
    o.paint = gpu_paint;
    o.compose = gpu_compose;
    o.region_sums = gpu_region_sums;
    o.read_cells = gpu_read_cells;
    o.agent_cells = gpu_agent_cells;
    o.models = gpu_cuda_model_backend; /* every model that is not plain */
    return o;
}

static constexpr sim_backend_ops cuda_ops = make_cuda_ops();

extern "C" const sim_backend_ops *gpu_cuda_backend(void)
{
    return &cuda_ops;
}

/* The instance behind s, or NULL when s runs on another backend. */
static gpu_state *instance(sim *s)
{
    return sim_get_backend(s) == &cuda_ops ? (gpu_state *)sim_get_backend_state(s) : NULL;
}

extern "C" int gpu_tune(sim *s, const gpu_tuning *t, sim_err *err)
{
    gpu_state *st = instance(s);
    if (!st)
        return sim_err_set(err, SIM_EINVAL, "gpu_tune: the simulation runs on the %s backend",
                           sim_get_backend(s)->name);
    if (t->horizon_mode < GPU_HMODE_AUTO || t->horizon_mode > GPU_HMODE_SPARSE)
        return sim_err_set(err, SIM_EINVAL, "gpu_tune: horizon_mode %d (allowed 0..2)",
                           t->horizon_mode);
    if (t->mapping < GPU_MAP_AUTO || t->mapping > GPU_MAP_SELL)
        return sim_err_set(err, SIM_EINVAL, "gpu_tune: mapping %d (allowed 0..%d)", t->mapping,
                           GPU_MAP_SELL);
    if (t->fuse_max < 0 || t->fuse_max > GPU_JF_KMAX)
        return sim_err_set(err, SIM_EINVAL, "gpu_tune: fuse_max %d (allowed 0..%d)", t->fuse_max,
                           GPU_JF_KMAX);
    if (t->steps_per_graph < 0 || t->steps_per_graph > GPU_BATCH_GRAPH_MAX)
        return sim_err_set(err, SIM_EINVAL, "gpu_tune: steps_per_graph %d (allowed 0..%d)",
                           t->steps_per_graph, GPU_BATCH_GRAPH_MAX);
    if (t->resident < GPU_RES_AUTO || t->resident > GPU_RES_TINY)
        return sim_err_set(err, SIM_EINVAL, "gpu_tune: resident %d (allowed 0..%d)", t->resident,
                           GPU_RES_TINY);
    st->tune = *t;
    return replan(st, err);
}

extern "C" int gpu_horizon_mode(sim *s)
{
    gpu_state *st = instance(s);
    return st ? st->plan.mode : GPU_HMODE_AUTO;
}

extern "C" int gpu_tiny_kernel(sim *s)
{
    gpu_state *st = instance(s);
    return st && st->tiny_smem > 0;
}
