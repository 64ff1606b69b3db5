/* gpu_info.cu - devices and errors: probing without crashing when there is no driver, the
 * `horizon info` report, the device-memory estimate, the conversion of CUDA errors into
 * sim_status codes with file:line, and the measuring aids' on/off switches (gpu_check.h). */
#include <stdlib.h>
#include <string.h>

#include "gpu_check.h"
#include "gpu_horizon.h"
#include "gpu_policy.h"
#include "gpu_state.h"

int gpu_fail_devmem(sim_err *err, size_t asked, const char *what)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        cudaGetLastError();
    return sim_err_set(err, SIM_EDEVMEM,
                       "out of device memory: %zu bytes (%.1f MiB) asked for %s, %zu bytes "
                       "(%.1f MiB) free (try a smaller world or --backend cpu)",
                       asked, asked / 1048576.0, what, free_b, free_b / 1048576.0);
}

int gpu_env_switch(const char *name, int *on, sim_err *err)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return SIM_OK;
    if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
        return sim_err_set(err, SIM_EINVAL, "%s=%s: allowed 0 or 1", name, v);
    *on = v[0] == '1';
    return SIM_OK;
}

static int is_nodev(cudaError_t e)
{
    return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
           e == cudaErrorInitializationError || e == cudaErrorNoKernelImageForDevice ||
           e == cudaErrorInvalidDeviceFunction || e == cudaErrorCompatNotSupportedOnDevice ||
           e == cudaErrorSystemDriverMismatch;
}

int gpu_fail(sim_err *err, cudaError_t e, const char *file, int line, const char *what)
{
    cudaGetLastError(); /* clear a non-sticky error so that later calls report their own */
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    if (e == cudaErrorMemoryAllocation)
        return gpu_fail_devmem(err, 0, what);
    int code = is_nodev(e) ? SIM_ENODEV : SIM_EDEVICE;
    return sim_err_set(err, code, "cuda: %s (%s) at gpu/%s:%d in %.160s", cudaGetErrorString(e),
                       cudaGetErrorName(e), base, line, what);
}

cudaError_t gpu_launch_status(cudaStream_t s)
{
    cudaError_t e = cudaGetLastError();
#ifdef HORIZON_GPU_SYNC
    if (e == cudaSuccess) {
        cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(s, &cs) == cudaSuccess && cs == cudaStreamCaptureStatusNone)
            e = cudaStreamSynchronize(s);
    }
#else
    (void)s;
#endif
    return e;
}

/* A kernel that only exists to ask whether this build has code for the device. */
__global__ void probe_kernel(int *p)
{
    if (p)
        *p = 1;
}

extern "C" int gpu_probe(char *why, size_t n)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        cudaGetLastError();
        if (why && n) {
            if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0))
                snprintf(why, n, "no CUDA device found");
            else if (e == cudaErrorInsufficientDriver)
                snprintf(why, n, "no CUDA driver, or one older than this build needs");
            else
                snprintf(why, n, "CUDA unavailable: %s", cudaGetErrorString(e));
        }
        return 0;
    }
    cudaFuncAttributes fa;
    e = cudaFuncGetAttributes(&fa, probe_kernel);
    if (e != cudaSuccess) {
        cudaGetLastError();
        if (why && n) {
            cudaDeviceProp prop;
            memset(&prop, 0, sizeof prop);
            cudaGetDeviceProperties(&prop, 0);
            cudaGetLastError();
            snprintf(why, n, "%s (compute capability %d.%d) cannot run this build: %s", prop.name,
                     prop.major, prop.minor, cudaGetErrorString(e));
        }
        return 0;
    }
    if (why && n)
        why[0] = '\0';
    return count;
}

extern "C" size_t gpu_estimate_bytes(const sim_scenario *sc)
{
    size_t cells = (size_t)sc->width * (size_t)sc->height;
    int64_t n = sim_scenario_agent_count(sc);
    gpu_hz_geom g;
    gpu_hz_geometry(sc->width, sc->height, sc->boundary == SIM_BOUNDARY_PERIODIC, sc->radius, &g);
    size_t b = cells * (2 * sizeof(float) + sizeof(unsigned long long)); /* fields, claims */
    /* the column sums and the fused pass's (gpu_step_colpart) */
    b += gpu_step_colsum_len(sc->width) * sizeof(double) + sizeof(gpu_ctl);
    b += 2 * SIM_STEP_BATCH_MAX * sizeof(gpu_ctl) + 2 * sizeof(unsigned); /* batch rings */
    b += (size_t)(n > 0 ? n : 1) * (2 * sizeof(uint32_t) + sizeof(unsigned long long));
    b += gpu_step_bins_bytes(n, (int64_t)cells, g.ntiles);
    b += 4096; /* allocation rounding */
    return b;
}

extern "C" int gpu_use_device(int dev, sim_err *err)
{
    cudaError_t e = cudaSetDevice(dev);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return sim_err_set(err, SIM_ENODEV, "CUDA device %d: %s", dev, cudaGetErrorString(e));
    }
    return SIM_OK;
}

/* How the CUDA backend will run a plain scenario's batches (gpu_step_batch.cu, with the
 * automatic tuning): the one-block kernel of tiny worlds, the cooperative grid for a world's
 * first batched steps, or graphs of the step's kernels. */
static void print_step_path(FILE *f, const sim_scenario *sc)
{
    gpu_hz_geom g, whole;
    const int periodic = sc->boundary == SIM_BOUNDARY_PERIODIC;
    gpu_hz_geometry(sc->width, sc->height, periodic, sc->radius, &g);
    const int64_t cells = (int64_t)sc->width * sc->height, n = sim_scenario_agent_count(sc);
    size_t bytes = 0;
    sim_err err;
    if (cells <= GPU_TINY_CELLS_AUTO &&
        gpu_tiny_fit(sc->width, sc->height, periodic, sc->radius, n, g.ntiles, &whole, &bytes,
                     NULL, &err) != SIM_OK) {
        cudaGetLastError();
        bytes = 0;
    }
    if (bytes > 0)
        fprintf(f, "cuda steps: a tiny world: every batch in one thread block (%.1f KiB of shared "
                "memory)\n", bytes / 1024.0);
    else if (n > 0 && cells <= GPU_RES_CELLS_MAX)
        fprintf(f, "cuda steps: a cooperative grid for the first %d batched steps, then graphs "
                "of the step's kernels (%d tiles of %d)\n", GPU_BATCH_RUN_AFTER, g.ntiles, g.T);
    else
        fprintf(f, "cuda steps: graphs of the step's kernels (%d tiles of %d)\n", g.ntiles, g.T);
}

extern "C" void gpu_info_print(FILE *f, const sim_scenario *sc)
{
    char why[256];
    int count = gpu_probe(why, sizeof why);
    if (count <= 0) {
        fprintf(f, "cuda: no usable device (%s)\n", why);
    } else {
        int cur = 0;
        cudaGetDevice(&cur);
        for (int i = 0; i < count; i++) {
            cudaDeviceProp prop;
            size_t free_b = 0, total_b = 0;
            if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
                cudaGetLastError();
                continue;
            }
            if (cudaSetDevice(i) != cudaSuccess || cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
                cudaGetLastError();
            fprintf(f, "cuda device %d: %s, compute capability %d.%d, %d multiprocessors, "
                    "%.1f GiB free of %.1f GiB\n", i, prop.name, prop.major, prop.minor,
                    prop.multiProcessorCount, free_b / 1073741824.0, total_b / 1073741824.0);
        }
        cudaSetDevice(cur);
    }
    if (sc && !sim_model_is_plain(sc)) {
        /* a model that is not plain runs on the model engine (sim.h picks it) */
        sim_mem mem;
        char split[256] = "";
        if (gpu_model_memory(sc, &mem) == SIM_OK)
            sim_mem_describe(&mem, split, sizeof split);
        fprintf(f, "cuda memory estimate (model engine): %.1f MiB at the start (%s; the agent "
                "arrays grow with births)\n", mem.total / 1048576.0, split);
        return;
    }
    if (sc) {
        size_t b = gpu_estimate_bytes(sc);
        int64_t cells = (int64_t)sc->width * sc->height, n = sim_scenario_agent_count(sc);
        fprintf(f, "cuda memory estimate: %.1f MiB (%.1f B/cell + %.1f B/agent)\n",
                b / 1048576.0, 16.0 + 8.0 / sc->height,
                n > 0 ? (double)(b - (size_t)cells * 16) / (double)n : 0.0);
        if (count > 0)
            print_step_path(f, sc);
        /* gpu_step_batch's column-sum ring, taken when a batch first wants statistics. */
        fprintf(f, "cuda batched steps with statistics: up to %.1f MiB more (device, and as "
                "much pinned host memory), taken on first use\n",
                (double)SIM_STEP_BATCH_MAX * (double)sc->width * sizeof(double) / 1048576.0);
    }
}
