/* gpu_alloc.cu - the device and pinned-host allocation door of gpu/ (gpu_alloc.h): thin wrappers
 * around cudaMalloc / cudaMallocHost that count, turn failures into statuses with messages, and
 * (for tests) fail on demand.
 *
 * The counters below are process-wide mutable state, which STYLE.md otherwise forbids. They are
 * here for the same reason as sim_alloc.c's: a fault-injection switch must reach code that has no
 * handle to pass it through (the backend allocates inside sim_create, the bench outside any
 * instance), and CUDA memory itself is per process. They are atomics, touched only when memory
 * is taken or given back, never in the step loop. */
#include <atomic>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu_alloc.h"
#include "gpu_backend.h"
#include "gpu_check.h"

static std::atomic<long> fail_at(0);  /* 0: never fail; else the attempt number that fails */
static std::atomic<long> attempts(0); /* attempts since the last gpu_alloc_fail_at */
static std::atomic<long> live(0);     /* blocks handed out and not yet freed */

/* HORIZON_GPU_FAIL_ALLOC=N arms the switch. Anything but a whole number >= 0 is ignored with a
 * warning rather than refused: it is a test hook, and a run must not fail because of a typo in
 * a variable that only tests set. */
static int arm_from_env(void)
{
    const char *v = getenv("HORIZON_GPU_FAIL_ALLOC");
    if (!v || !*v)
        return 0;
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || n < 0) {
        fprintf(stderr, "horizon: HORIZON_GPU_FAIL_ALLOC='%s' ignored (a test hook: the number "
                "of the device allocation that fails, 1 or more)\n", v);
        return 0;
    }
    gpu_alloc_fail_at(n);
    return 1;
}

/* Reads the environment once per process, at the first allocation: counting starts there, so
 * N is the same for every run of the same command. A function-local static is initialised
 * exactly once even when threads race to it. */
static void arm_once(void)
{
    static const int armed = arm_from_env();
    (void)armed;
}

/* Counts one attempt; returns its number when the switch says it fails, else 0. */
static long injected_failure(void)
{
    arm_once();
    long n = attempts.fetch_add(1) + 1;
    long f = fail_at.load();
    return f > 0 && n == f ? n : 0;
}

int gpu_alloc_device(void **p, size_t bytes, const char *what, sim_err *err)
{
    *p = NULL;
    if (bytes == 0)
        bytes = 1; /* cudaMalloc(0) may give NULL; NULL must keep meaning "not allocated" */
    long inj = injected_failure();
    if (inj)
        return sim_err_set(err, SIM_EDEVMEM,
                           "out of device memory: %zu bytes (%.1f MiB) asked for %s (injected "
                           "failure of device allocation %ld: HORIZON_GPU_FAIL_ALLOC)",
                           bytes, bytes / 1048576.0, what, inj);
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        *p = NULL;
        cudaGetLastError(); /* not sticky: later calls must report their own errors */
        return gpu_fail_devmem(err, bytes, what);
    }
    if (e != cudaSuccess) {
        *p = NULL;
        return gpu_fail(err, e, __FILE__, __LINE__, what);
    }
    live.fetch_add(1);
    return SIM_OK;
}

int gpu_alloc_pinned(void **p, size_t bytes, const char *what, sim_err *err)
{
    *p = NULL;
    if (bytes == 0)
        bytes = 1;
    long inj = injected_failure();
    if (inj)
        return sim_err_set(err, SIM_ENOMEM,
                           "out of pinned host memory: %zu bytes asked for %s (injected failure "
                           "of device allocation %ld: HORIZON_GPU_FAIL_ALLOC)",
                           bytes, what, inj);
    cudaError_t e = cudaMallocHost(p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        *p = NULL;
        cudaGetLastError();
        return sim_err_set(err, SIM_ENOMEM,
                           "out of pinned host memory: %zu bytes (%.1f MiB) asked for %s", bytes,
                           bytes / 1048576.0, what);
    }
    if (e != cudaSuccess) {
        *p = NULL;
        return gpu_fail(err, e, __FILE__, __LINE__, what);
    }
    live.fetch_add(1);
    return SIM_OK;
}

void gpu_alloc_free(void *d)
{
    if (!d)
        return;
    live.fetch_sub(1);
    if (cudaFree(d) != cudaSuccess)
        cudaGetLastError();
}

void gpu_alloc_free_pinned(void *h)
{
    if (!h)
        return;
    live.fetch_sub(1);
    if (cudaFreeHost(h) != cudaSuccess)
        cudaGetLastError();
}

extern "C" void gpu_alloc_fail_at(long n)
{
    fail_at.store(n > 0 ? n : 0);
    attempts.store(0);
}

extern "C" long gpu_alloc_attempts(void)
{
    return attempts.load();
}

extern "C" long gpu_alloc_live(void)
{
    return live.load();
}
