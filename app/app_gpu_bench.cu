/* app_gpu_bench.cu - the GPU sections of `horizon bench` (gpu_bench_run): copy bandwidth (the
 * ceiling), Jacobi one sweep per pass and fused, horizon sums and tile mappings
 * (app_gpu_bench_hz.cu), the large scenario's full step on GPU and CPU (and each part of the step
 * timed alone, step_part), and the seed-001 Laplace exercise. Device timings are medians of
 * CUDA-event-timed runs after a warm-up; whole steps are timed on the host clock because every
 * step returns its moved count to the host. */
#include <omp.h>
#include <string.h>
#include <time.h>

#include "gpu_alloc.h"
#include "gpu_backend.h"
#include "app_bench_gpu.h"
#include "app_gpu_bench.h"
#include "gpu_jacobi.h"
#include "gpu_policy.h"
#include "gpu_state.h"

extern "C" {
#include "sim.h"
#include "sim_impl.h" /* the bench times the parts of its own instance's step */
#include "sim_rules.h"
}

double gpu_bench_median(double *v, int n)
{
    for (int i = 1; i < n; i++) /* insertion sort: n is tiny */
        for (int k = i; k > 0 && v[k] < v[k - 1]; k--) {
            double t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void gpu_bench_member(gpu_bench_ctx *c)
{
    if (c->json)
        fprintf(c->json, c->members++ ? ",\n    " : "\n    ");
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__global__ void bench_noise_kernel(float *f, size_t n, uint64_t seed)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        f[i] = (float)(sim_random(seed, i, 0, SIM_RNG_FIELD).v[0] >> 8) * (1.0f / 16777216.0f);
}

/* ---- 1. copy bandwidth ---- */
static int bench_copy(gpu_bench_ctx *c, sim_err *err)
{
    size_t bytes = c->quick ? ((size_t)256 << 20) : ((size_t)2 << 30);
    void *a = NULL, *b = NULL;
    int rc = gpu_alloc_device(&a, bytes, "bench copy buffers", err);
    if (rc == SIM_OK)
        rc = gpu_alloc_device(&b, bytes, "bench copy buffers", err);
    if (rc != SIM_OK) {
        gpu_alloc_free(a);
        gpu_alloc_free(b);
        return rc;
    }
    double ms = 0.0;
    rc = cudaMemsetAsync(a, 1, bytes, c->s) == cudaSuccess ? SIM_OK : SIM_EDEVICE;
    if (rc == SIM_OK)
        rc = gpu_bench_time(c, c->quick ? 5 : 20, [&]() -> int {
            GPU_CHECK(err, cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, c->s));
            return SIM_OK;
        }, &ms, err);
    gpu_alloc_free(a);
    gpu_alloc_free(b);
    GPU_TRY(rc);
    c->copy_gbs = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
    fprintf(c->table, "\ngpu copy: %.0f MiB device to device, %.3f ms: %.0f GB/s (read + write)\n",
            bytes / 1048576.0, ms, c->copy_gbs);
    if (c->json) {
        gpu_bench_member(c);
        fprintf(c->json, "\"copy\": {\"bytes\": %zu, \"ms\": %.4f, \"gbs\": %.1f}", bytes, ms,
                c->copy_gbs);
    }
    return SIM_OK;
}

/* ---- 2. Jacobi ---- */

/* Device to host on the bench stream (a non-blocking stream: the legacy default stream would
 * not wait for it). */
static int to_host(gpu_bench_ctx *c, void *dst, const void *src, size_t bytes, sim_err *err)
{
    GPU_CHECK(err, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->s));
    GPU_CHECK(err, cudaStreamSynchronize(c->s));
    return SIM_OK;
}

typedef struct jac_bufs {
    float *src, *a, *b;  /* input (kept), ping-pong pair */
    float *h_ref, *h_out; /* host: one sweep per pass result, the variant's result */
} jac_bufs;

/* One variant: correctness (8 sweeps from src against the one-sweep-per-pass result of the
 * default kernel, bit for bit; `is_ref`: this is that result), then the median time of 8
 * sweeps. */
static int jacobi_variant(gpu_bench_ctx *c, const gpu_jac *p, jac_bufs *jb, size_t cells, int fuse,
                          int is_ref, int *equal, double *ms_per_sweep, sim_err *err)
{
    const int sweeps = 8;
    const size_t bytes = cells * sizeof(float);
    float *cur = jb->a, *other = jb->b;
    GPU_CHECK(err, cudaMemcpyAsync(jb->a, jb->src, bytes, cudaMemcpyDeviceToDevice, c->s));
    GPU_TRY(gpu_jacobi_run(p, &cur, &other, sweeps, fuse, 0, NULL, c->s, err));
    GPU_TRY(to_host(c, is_ref ? jb->h_ref : jb->h_out, cur, bytes, err));
    *equal = is_ref || memcmp(jb->h_ref, jb->h_out, bytes) == 0;
    double ms = 0.0;
    GPU_TRY(gpu_bench_time(c, c->quick ? 3 : 10, [&]() -> int {
        return gpu_jacobi_run(p, &cur, &other, sweeps, fuse, 0, NULL, c->s, err);
    }, &ms, err));
    *ms_per_sweep = ms / sweeps;
    return SIM_OK;
}

static int jacobi_size(gpu_bench_ctx *c, int side, int first, double *rate1, double *rate4,
                       sim_err *err)
{
    const size_t cells = (size_t)side * side, bytes = cells * sizeof(float);
    jac_bufs jb;
    memset(&jb, 0, sizeof jb);
    int rc = gpu_alloc_device((void **)&jb.src, bytes, "bench Jacobi buffers", err);
    if (rc == SIM_OK)
        rc = gpu_alloc_device((void **)&jb.a, bytes, "bench Jacobi buffers", err);
    if (rc == SIM_OK)
        rc = gpu_alloc_device((void **)&jb.b, bytes, "bench Jacobi buffers", err);
    jb.h_ref = (float *)malloc(bytes);
    jb.h_out = (float *)malloc(bytes);
    if (rc == SIM_OK && (!jb.h_ref || !jb.h_out))
        rc = sim_err_set(err, SIM_ENOMEM, "bench: out of host memory");
    if (rc == SIM_OK) {
        bench_noise_kernel<<<(unsigned)((cells + 255) / 256), 256, 0, c->s>>>(jb.src, cells, 7);
        if (cudaGetLastError() != cudaSuccess)
            rc = sim_err_set(err, SIM_EDEVICE, "bench: fill kernel failed");
    }
    gpu_jac p;
    memset(&p, 0, sizeof p);
    p.w = p.h = side;
    p.boundary = SIM_BOUNDARY_PERIODIC;
    p.a = 0.5f;
    p.one_minus_a = 1.0f - p.a;
    p.keep = 1.0f;
    static const int fuse[4] = {1, 2, 4, 8};
    double per1 = 0.0;
    for (int fi = 0; fi < 4 && rc == SIM_OK; fi++) {
        int equal = 0;
        double per = 0.0;
        rc = jacobi_variant(c, &p, &jb, cells, fuse[fi], fuse[fi] == 1, &equal, &per, err);
        if (rc != SIM_OK)
            break;
        double gbs = 8.0 * (double)cells / (per * 1e-3) / 1e9;
        if (fi == 0) {
            per1 = per;
            *rate1 = gbs;
        }
        if (fuse[fi] == 4)
            *rate4 = gbs;
        fprintf(c->table, "  %6d %12d %10.4f %10.0f %9.1f%% %8.2fx %6s\n", side, fuse[fi], per,
                gbs, 100.0 * gbs / c->copy_gbs, per1 / per, equal ? "yes" : "NO");
        if (c->json)
            fprintf(c->json, "%s{\"side\": %d, \"sweeps_per_pass\": %d, \"ms_per_sweep\": %.5f, "
                    "\"gbs_8b_cell\": %.1f, \"pct_copy\": %.1f, \"speedup\": %.3f, "
                    "\"equal\": %s}", first && fi == 0 ? "" : ", ", side, fuse[fi], per, gbs,
                    100.0 * gbs / c->copy_gbs, per1 / per, equal ? "true" : "false");
        if (!equal)
            c->failed++;
    }
    /* The one-sweep kernel with taller strips (fewer halo rows) and with the other load batch
     * (rows in flight per thread), for comparison; both checked against the default. */
    for (int v = 0; v < 2 && rc == SIM_OK && side >= 8192; v++) {
        int equal = 0;
        double per = 0.0;
        if (v == 0)
            p.js_rows = 2 * GPU_JS_ROWS;
        else
            p.js_batch = GPU_JS_BATCH == 8 ? 4 : 8;
        rc = jacobi_variant(c, &p, &jb, cells, 1, 0, &equal, &per, err);
        char label[32];
        if (v == 0)
            snprintf(label, sizeof label, "1 (%d rows)", p.js_rows);
        else
            snprintf(label, sizeof label, "1 (batch %d)", p.js_batch);
        p.js_rows = 0;
        p.js_batch = 0;
        double gbs = 8.0 * (double)cells / (per * 1e-3) / 1e9;
        if (rc == SIM_OK)
            fprintf(c->table, "  %6d %12s %10.4f %10.0f %9.1f%% %8.2fx %6s\n", side, label, per,
                    gbs, 100.0 * gbs / c->copy_gbs, per1 / per, equal ? "yes" : "NO");
        if (rc == SIM_OK && !equal)
            c->failed++;
    }
    free(jb.h_ref);
    free(jb.h_out);
    gpu_alloc_free(jb.src);
    gpu_alloc_free(jb.a);
    gpu_alloc_free(jb.b);
    return rc;
}

static int bench_jacobi(gpu_bench_ctx *c, sim_err *err)
{
    fprintf(c->table, "\ngpu Jacobi (periodic, 8 sweeps per run; GB/s at 8 B/cell/sweep):\n");
    fprintf(c->table, "  %6s %12s %10s %10s %10s %9s %6s\n", "side", "sweeps/pass", "ms/sweep",
            "GB/s", "% copy", "vs 1/pass", "equal");
    if (c->json) {
        gpu_bench_member(c);
        fprintf(c->json, "\"jacobi\": [");
    }
    double r1 = 0, r4 = 0;
    GPU_TRY(jacobi_size(c, 4096, 1, &r1, &r4, err));
    if (!c->quick)
        GPU_TRY(jacobi_size(c, 16384, 0, &r1, &r4, err));
    int ok1 = r1 >= 0.9 * c->copy_gbs, ok4 = r4 >= 2.0 * r1;
    fprintf(c->table, "  targets at %d^2: one sweep/pass >= 90%% of copy: %.1f%% %s; fused 4 >= "
            "2x: %.2fx %s\n", c->quick ? 4096 : 16384, 100.0 * r1 / c->copy_gbs,
            ok1 ? "met" : "MISSED", r4 / r1, ok4 ? "met" : "MISSED");
    if (c->json)
        fprintf(c->json, "],\n    \"jacobi_targets\": {\"one_pass_90pct\": %s, \"fused4_2x\": %s}",
                ok1 ? "true" : "false", ok4 ? "true" : "false");
    return SIM_OK;
}

/* ---- 4. the large scenario, GPU vs CPU ---- */

/* The parts of a step, each timed alone on a benchmark instance. */
enum { PART_BIN, PART_DECIDE, PART_MOVE, PART_DIFFUSE, PART_STATS, PART_COUNT };

/* Enqueues one part of the step alone on st->stream. It leaves the state inconsistent (the
 * bins, the field and the claims no longer belong together): benchmark instances only. */
static int step_part(gpu_state *st, int part, sim_err *err)
{
    cudaStream_t s = st->stream;
    float *cur = st->d_field, *other = st->d_spare;
    const int fold = gpu_step_folds(st);
    st->dev_step_ok = 0;
    switch (part) {
    case PART_BIN:
        /* Count, scan and scatter alone (in the step the count is part of the move kernel and
         * the rest runs beside the diffusion): the agents of the previous step's order, whose
         * final cells d_target holds after a step, into the current set. */
        if (st->n == 0)
            return SIM_OK;
        GPU_TRY(gpu_bins_agents_count(&st->ab, &st->geom, st->d_target, st->n, s, err));
        return gpu_bins_agents_rebin(&st->ab, &st->geom, st->ab.cur ^ 1, st->d_target, st->n,
                                     NULL, 0, s, err);
    case PART_DECIDE:
        return st->n > 0 ? gpu_step_decide(st, cur, 0, err) : SIM_OK;
    case PART_MOVE:
        return st->n > 0 ? gpu_step_move(st, cur, fold, err) : SIM_OK;
    case PART_DIFFUSE:
        return gpu_jacobi_run_dep(&st->jac, &cur, &other, st->sc.sweeps, st->tune.fuse_max,
                                  st->sc.decay > 0.0f, fold ? st->d_occ : NULL, st->sc.deposit,
                                  NULL, s, err);
    default: /* the statistics' own passes: the column sums alone when the step folds the rest */
        if (gpu_step_stats_fused(st))
            return gpu_stats_colsum(cur, st->w, st->h, st->d_colsum, NULL, NULL, s, err);
        GPU_TRY(gpu_stats_field(cur, st->w, st->h, st->d_colsum, st->d_ctl, s, err));
        return gpu_stats_agents(st->d_cells, st->n, st->d_ctl, s, err);
    }
}
static int set_keys(sim_scenario *sc, const char *const *kv, sim_err *err)
{
    for (; *kv; kv++)
        GPU_TRY(sim_scenario_set(sc, *kv, err));
    return SIM_OK;
}

static int large_scenario(int side, sim_scenario *sc, sim_err *err)
{
    static const char *const keys[] = {
        "world.boundary=periodic", "field.diffusion=0.5", "field.sweeps=2", "field.decay=0.01",
        "field.init_noise=1",      "agents.radius=8",     "agents.deposit=1",
        "agents.noise=0.05",       "run.seed=7",          NULL};
    char buf[96];
    sim_scenario_defaults(sc);
    GPU_TRY(set_keys(sc, keys, err));
    snprintf(buf, sizeof buf, "world.width=%d", side);
    GPU_TRY(sim_scenario_set(sc, buf, err));
    snprintf(buf, sizeof buf, "world.height=%d", side);
    GPU_TRY(sim_scenario_set(sc, buf, err));
    snprintf(buf, sizeof buf, "agents.count=%lld",
             (long long)((double)side * side / (4096.0 * 4096.0) * 1048576.0));
    return sim_scenario_set(sc, buf, err);
}

static const char *horizon_mode_name(const sim_scenario *sc)
{
    gpu_hz_geom g;
    gpu_hz_geometry(sc->width, sc->height, sc->boundary == SIM_BOUNDARY_PERIODIC, sc->radius, &g);
    return gpu_hz_choose_mode(&g, sim_scenario_agent_count(sc), GPU_HMODE_AUTO) ==
                   GPU_HMODE_DENSE
               ? "dense"
               : "sparse";
}

/* Steps per second of `steps` steps after `warm` warm-up steps. */
static int steps_rate(const sim_scenario *sc, const sim_backend_ops *ops, int warm, int steps,
                      int want_stats, double *rate, sim_err *err)
{
    sim *s = NULL;
    GPU_TRY(sim_create(sc, ops, 0, &s, err));
    sim_stats st;
    int rc = SIM_OK;
    for (int k = 0; k < warm && rc == SIM_OK; k++)
        rc = sim_step(s, want_stats, &st);
    double t0 = wall_s();
    for (int k = 0; k < steps && rc == SIM_OK; k++)
        rc = sim_step(s, want_stats, &st);
    *rate = steps / (wall_s() - t0);
    if (rc != SIM_OK)
        sim_err_set(err, rc, "%s", sim_errmsg(s));
    sim_destroy(s);
    return rc;
}

/* Checksums of both backends after each of `steps` steps from the same initial state. */
static int steps_equal(const sim_scenario *sc, int steps, int *equal, sim_err *err)
{
    sim *g = NULL, *h = NULL;
    GPU_TRY(sim_create(sc, gpu_cuda_backend(), 0, &g, err));
    int rc = sim_create(sc, sim_cpu_backend(), 0, &h, err);
    *equal = 1;
    for (int k = 0; k < steps && rc == SIM_OK; k++) {
        sim_stats a, b;
        rc = sim_step(g, 1, &a);
        if (rc == SIM_OK)
            rc = sim_step(h, 1, &b);
        if (rc == SIM_OK && (a.checksum != b.checksum || a.moved != b.moved))
            *equal = 0;
    }
    sim_destroy(g);
    sim_destroy(h);
    return rc;
}

static int bench_step(gpu_bench_ctx *c, int side, sim_err *err)
{
    sim_scenario sc;
    GPU_TRY(large_scenario(side, &sc, err));
    double gpu = 0, gpu_stats = 0, cpu = 0;
    int equal = 0;
    const int gsteps = c->quick ? 50 : 1000;
    GPU_TRY(steps_rate(&sc, gpu_cuda_backend(), 10, gsteps, 0, &gpu, err));
    GPU_TRY(steps_rate(&sc, gpu_cuda_backend(), 5, gsteps / 5, 1, &gpu_stats, err));
    GPU_TRY(steps_rate(&sc, sim_cpu_backend(), 1, c->quick ? 1 : 4, 0, &cpu, err));
    GPU_TRY(steps_equal(&sc, c->quick ? 2 : 3, &equal, err));
    /* Where a step's time goes: each part alone on a throwaway instance, event-timed, after one
     * whole step (the binning part rebins that step's moves). */
    double part_ms[PART_COUNT];
    int nodes = 0, kernels = 0;
    /* Setup: the time sim_create takes to have the world ready to step (initial placement, the
     * initial field, the backend's first binning), on each backend (issue 11 asks for it). */
    double setup_gpu = 0.0, setup_cpu = 0.0;
    {
        sim *h = NULL;
        double t0 = wall_s();
        GPU_TRY(sim_create(&sc, sim_cpu_backend(), 0, &h, err));
        setup_cpu = wall_s() - t0;
        sim_destroy(h);
    }
    {
        sim *s = NULL;
        double t0 = wall_s();
        GPU_TRY(sim_create(&sc, gpu_cuda_backend(), 0, &s, err));
        setup_gpu = wall_s() - t0;
        gpu_state *st = (gpu_state *)sim_get_backend_state(s);
        cudaStream_t keep = c->s;
        c->s = st->stream;
        sim_stats one;
        int rc = sim_step(s, 0, &one);
        if (rc != SIM_OK)
            sim_err_set(err, rc, "%s", sim_errmsg(s));
        nodes = st->graph_nodes;
        kernels = st->graph_kernels;
        for (int part = 0; part < PART_COUNT && rc == SIM_OK; part++)
            rc = gpu_bench_time(c, c->quick ? 3 : 10, [&]() -> int {
                return step_part(st, part, err);
            }, &part_ms[part], err);
        c->s = keep;
        sim_destroy(s);
        GPU_TRY(rc);
    }
    int h200 = strstr(c->device, "H200") != NULL;
    double target = h200 ? 4000.0 : 3000.0;
    fprintf(c->table, "\ngpu full step: %dx%d periodic, %lld agents, r=%d, %d sweeps (the large "
            "scenario)\n", sc.width, sc.height, (long long)sim_scenario_agent_count(&sc),
            sc.radius, sc.sweeps);
    fprintf(c->table, "  gpu %.0f steps/s (%.3f ms/step), with stats every step %.0f steps/s; "
            "cpu (%d threads) %.2f steps/s; gpu/cpu %.0fx; checksums equal: %s\n", gpu,
            1e3 / gpu, gpu_stats, omp_get_max_threads(), cpu, gpu / cpu, equal ? "yes" : "NO");
    const int fold = sc.sweeps > 0 && gpu_jacobi_first_pass(sc.sweeps, 0) >= 2;
    fprintf(c->table, "  parts alone (ms): bin %.4f (count+scan+scatter; in the step the count is "
            "in move, the rest beside diffuse), sense+decide+claim %.4f (%s), move%s %.4f, "
            "diffuse%s %.4f, stats %.4f\n", part_ms[0], part_ms[1], horizon_mode_name(&sc),
            fold ? "" : "+deposit", part_ms[2], fold ? "+deposit" : "", part_ms[3], part_ms[4]);
    fprintf(c->table, "  step graph: %d nodes, %d kernels (no stats)\n", nodes, kernels);
    fprintf(c->table, "  setup (sim_create until ready to step): gpu %.3f s, cpu (%d threads) "
            "%.3f s\n", setup_gpu, omp_get_max_threads(), setup_cpu);
    fprintf(c->table, "  targets: >= %.0f steps/s on an %s: %s; >= 100x the CPU: %s\n", target,
            h200 ? "H200" : "H100", gpu >= target ? "met" : "MISSED",
            gpu >= 100.0 * cpu ? "met" : "MISSED");
    /* Issue 11's: 5,000 steps/s on an H200 (item 5), statistics every step at most 10% slower
     * (item 4); the step's physical floor is in gpu/BENCH.md. */
    const double stats_cost = gpu > 0.0 ? 1.0 - gpu_stats / gpu : 0.0;
    fprintf(c->table, "  issue 11: >= 5000 steps/s on an H200: %s; statistics every step %.1f%% "
            "slower (<= 10%%: %s)\n", h200 && gpu >= 5000.0 ? "met" : "MISSED",
            100.0 * stats_cost, stats_cost <= 0.10 ? "met" : "MISSED");
    if (c->json) {
        gpu_bench_member(c);
        fprintf(c->json, "\"step\": {\"side\": %d, \"agents\": %lld, \"gpu_steps_per_s\": %.1f, "
                "\"gpu_steps_per_s_stats\": %.1f, \"cpu_steps_per_s\": %.3f, \"ratio\": %.1f, "
                "\"checksums_equal\": %s, \"parts_ms\": {\"bin\": %.4f, \"decide\": %.4f, "
                "\"move\": %.4f, \"diffuse\": %.4f, \"stats\": %.4f}, \"graph_nodes\": %d, "
                "\"graph_kernels\": %d, \"deposit_in_diffuse\": %s, \"setup_gpu_s\": %.4f, "
                "\"setup_cpu_s\": %.4f}", side,
                (long long)sim_scenario_agent_count(&sc), gpu, gpu_stats, cpu, gpu / cpu,
                equal ? "true" : "false", part_ms[0], part_ms[1], part_ms[2], part_ms[3],
                part_ms[4], nodes, kernels, fold ? "true" : "false", setup_gpu, setup_cpu);
    }
    if (!equal)
        c->failed++;
    return SIM_OK;
}

/* ---- 5. the Laplace exercise ---- */
static int bench_laplace(gpu_bench_ctx *c, sim_err *err)
{
    static const char *const keys[] = {
        "world.boundary=fixed", "world.fixed_top=100", "world.fixed_bottom=0",
        "world.fixed_left=0",   "world.fixed_right=0", "field.diffusion=1",
        "field.sweeps=100",     "field.decay=0",       "field.initial=0",
        "field.init_noise=0",   "agents.count=0",      NULL};
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    GPU_TRY(set_keys(&sc, keys, err));
    GPU_TRY(sim_scenario_set(&sc, c->quick ? "world.width=2000" : "world.width=20000", err));
    GPU_TRY(sim_scenario_set(&sc, c->quick ? "world.height=1000" : "world.height=10000", err));
    const int steps = c->quick ? 10 : 100;
    sim *s = NULL;
    GPU_TRY(sim_create(&sc, gpu_cuda_backend(), 0, &s, err));
    sim_stats st;
    memset(&st, 0, sizeof st);
    int rc = SIM_OK;
    double t0 = wall_s();
    for (int k = 0; k < steps && rc == SIM_OK; k++)
        rc = sim_step(s, 1, &st); /* the exercise's residual every 100 sweeps */
    double secs = wall_s() - t0;
    if (rc != SIM_OK)
        sim_err_set(err, rc, "%s", sim_errmsg(s));
    sim_destroy(s);
    GPU_TRY(rc);
    int ok = secs <= 2.5;
    fprintf(c->table, "\ngpu Laplace exercise: %dx%d, fixed edges (top 100), %d sweeps: %.3f s "
            "(%.1f ms per 100 sweeps incl. residual), final residual %g, mean %.6f; target <= 2.5 "
            "s on an H200: %s\n", sc.width, sc.height, steps * sc.sweeps, secs, secs * 1e3 / steps,
            (double)st.residual, st.field_mean, ok ? "met" : "MISSED");
    if (c->json) {
        gpu_bench_member(c);
        fprintf(c->json, "\"laplace\": {\"width\": %d, \"height\": %d, \"sweeps\": %d, "
                "\"seconds\": %.4f, \"residual\": %g, \"mean\": %.8f}", sc.width, sc.height,
                steps * sc.sweeps, secs, (double)st.residual, st.field_mean);
    }
    return SIM_OK;
}

/* Opens the bench context on the current device, prints its header (table and JSON), runs the
 * full set of sections or the models section alone, and closes the context. */
static int bench_sections(int quick, int size, int models_only, FILE *table, FILE *json,
                          sim_err *err)
{
    char why[256];
    if (gpu_probe(why, sizeof why) <= 0)
        return sim_err_set(err, SIM_ENODEV, "cuda: %s", why);
    gpu_bench_ctx c;
    memset(&c, 0, sizeof c);
    c.quick = quick;
    c.table = table;
    c.json = json;
    cudaDeviceProp prop;
    int dev = 0;
    GPU_CHECK(err, cudaGetDevice(&dev));
    GPU_CHECK(err, cudaGetDeviceProperties(&prop, dev));
    snprintf(c.device, sizeof c.device, "%s", prop.name);
    GPU_CHECK(err, cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
    GPU_CHECK(err, cudaEventCreate(&c.e0));
    GPU_CHECK(err, cudaEventCreate(&c.e1));
    GPU_TRY(gpu_jacobi_init(err));
    fprintf(table, "\ngpu: %s, compute capability %d.%d, %d multiprocessors, %.1f GiB%s\n",
            prop.name, prop.major, prop.minor, prop.multiProcessorCount,
            prop.totalGlobalMem / 1073741824.0, quick ? " (quick: smaller sizes)" : "");
    if (json)
        fprintf(json, "  \"gpu\": {\"device\": \"%s\", \"quick\": %s", prop.name,
                quick ? "true" : "false");
    c.members = 1;
    /* --size: the side of the horizon field and of the large scenario (4096 by default, 2048 at
     * most in quick mode); the agent count keeps the large scenario's density. */
    int side = size > 0 ? size : 4096;
    if (quick && side > 2048)
        side = 2048;
    int rc = SIM_OK;
    if (!models_only) {
        rc = bench_copy(&c, err);
        if (rc == SIM_OK)
            rc = bench_jacobi(&c, err);
        if (rc == SIM_OK)
            rc = gpu_bench_horizon(&c, side, err);
        if (rc == SIM_OK)
            rc = bench_step(&c, side, err);
        if (rc == SIM_OK)
            rc = bench_laplace(&c, err);
    }
    if (rc == SIM_OK)
        rc = gpu_bench_models(&c, side, err);
    if (json)
        fprintf(json, ", \"checks_failed\": %d}", c.failed);
    if (rc == SIM_OK && c.failed)
        rc = sim_err_set(err, SIM_EINVAL, "bench: %d result checks failed (see the table: NO)",
                         c.failed);
    fflush(table);
    cudaEventDestroy(c.e0);
    cudaEventDestroy(c.e1);
    cudaStreamDestroy(c.s);
    return rc;
}

extern "C" int gpu_bench_run(int quick, int size, FILE *table, FILE *json, sim_err *err)
{
    return bench_sections(quick, size, 0, table, json, err);
}

extern "C" int gpu_bench_models_run(int quick, int size, FILE *table, FILE *json, sim_err *err)
{
    return bench_sections(quick, size, 1, table, json, err);
}
