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
#include <mutex>
#include <unordered_map>
#include <vector>
#include <stdio.h>
#include <stdlib.h>

#include "gpu_alloc.h"
#include "gpu_backend.h"
#include "gpu_check.h"

static std::atomic<long> fail_at(0);  /* 0: never fail; else the attempt number that fails */
static std::atomic<long> attempts(0); /* attempts since the last gpu_alloc_fail_at */
static std::atomic<long> live(0);     /* blocks handed out and not yet freed */

/* The reuse pool (gpu_alloc_pool): blocks given back while it is on wait here for a request of
 * the same size on the same device (device -1: pinned host memory), instead of going through
 * cudaFree / cudaMalloc, which serialise on a driver lock and wait for the whole device. A sweep
 * of many equal worlds then sets up a run without either. Bounded in bytes; guarded by one
 * mutex, taken only when memory is taken or given back. */
struct pooled {
    void *p;
    size_t bytes;
    int device;
};
static std::mutex pool_mu;
static std::vector<pooled> pool;
static size_t pool_bytes;
static std::atomic<int> pool_on(0);
static const size_t POOL_MAX_BYTES = (size_t)8 << 30;

/* A pooled block of exactly `bytes` on `device`, or NULL. */
static void *pool_take(size_t bytes, int device)
{
    if (!pool_on.load())
        return NULL;
    std::lock_guard<std::mutex> lock(pool_mu);
    for (size_t i = pool.size(); i-- > 0;) {
        if (pool[i].bytes == bytes && pool[i].device == device) {
            void *p = pool[i].p;
            pool[i] = pool.back();
            pool.pop_back();
            pool_bytes -= bytes;
            return p;
        }
    }
    return NULL;
}

/* Keeps a given-back block when the pool is on and has room: 1 when kept. */
static int pool_keep(void *p, size_t bytes, int device)
{
    if (!pool_on.load() || bytes == 0)
        return 0;
    std::lock_guard<std::mutex> lock(pool_mu);
    if (pool_bytes + bytes > POOL_MAX_BYTES)
        return 0;
    try {
        pool.push_back(pooled{p, bytes, device});
    } catch (...) {
        return 0;
    }
    pool_bytes += bytes;
    return 1;
}

/* Sizes and devices of the blocks handed out while the pool is on, so that a block given back
 * can be kept under its size (blocks from before the pool was turned on are not here, and are
 * freed as usual). */
static std::unordered_map<void *, pooled> handed;

static void note_handed(void *p, size_t bytes, int device)
{
    if (!pool_on.load())
        return;
    std::lock_guard<std::mutex> lock(pool_mu);
    try {
        handed[p] = pooled{p, bytes, device};
    } catch (...) {
        /* not recorded: the block is freed normally later */
    }
}

/* 1 when the block was kept for reuse (the caller then does not free it). */
static int give_back(void *p)
{
    if (!pool_on.load())
        return 0;
    size_t bytes;
    int device;
    {
        std::lock_guard<std::mutex> lock(pool_mu);
        auto it = handed.find(p);
        if (it == handed.end())
            return 0;
        bytes = it->second.bytes;
        device = it->second.device;
        handed.erase(it);
    }
    return pool_keep(p, bytes, device);
}

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
    int dev = 0;
    if (pool_on.load() && cudaGetDevice(&dev) == cudaSuccess &&
        (*p = pool_take(bytes, dev)) != NULL) {
        note_handed(*p, bytes, dev);
        live.fetch_add(1);
        return SIM_OK;
    }
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
    note_handed(*p, bytes, dev);
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
    if ((*p = pool_take(bytes, -1)) != NULL) {
        note_handed(*p, bytes, -1);
        live.fetch_add(1);
        return SIM_OK;
    }
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
    note_handed(*p, bytes, -1);
    live.fetch_add(1);
    return SIM_OK;
}

void gpu_alloc_free(void *d)
{
    if (!d)
        return;
    live.fetch_sub(1);
    if (give_back(d))
        return;
    if (cudaFree(d) != cudaSuccess)
        cudaGetLastError();
}

void gpu_alloc_free_pinned(void *h)
{
    if (!h)
        return;
    live.fetch_sub(1);
    if (give_back(h))
        return;
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

extern "C" void gpu_alloc_pool(int on)
{
    pool_on.store(on ? 1 : 0);
    if (on)
        return;
    std::lock_guard<std::mutex> lock(pool_mu);
    for (const pooled &b : pool) {
        cudaError_t e = b.device < 0 ? cudaFreeHost(b.p) : cudaFree(b.p);
        if (e != cudaSuccess)
            cudaGetLastError();
    }
    pool.clear();
    pool.shrink_to_fit();
    pool_bytes = 0;
    handed.clear(); /* blocks still out are freed as usual when given back */
}
