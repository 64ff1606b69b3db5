/* gpu_alloc.h - the one door through which gpu/ takes device memory (cudaMalloc) and pinned host
 * memory (cudaMallocHost), so that allocation failure can be tested on the device as sim_alloc.h
 * lets it be tested on the host: a switch makes the Nth allocation fail, and a counter shows how
 * many blocks are still held. Internal to gpu/ (C++); the test hooks themselves are plain C, in
 * gpu_backend.h (gpu_alloc_fail_at, gpu_alloc_attempts, gpu_alloc_live).
 *
 * The switch is also reachable from the binary: HORIZON_GPU_FAIL_ALLOC=N in the environment,
 * read once, at the process's first allocation through this door, arms gpu_alloc_fail_at(N). */
#ifndef GPU_ALLOC_H
#define GPU_ALLOC_H

#include <stddef.h>

extern "C" {
#include "sim_status.h"
}

/* Allocates `bytes` (0 counts as 1) of device memory into *p. On failure *p is NULL and the
 * status is SIM_EDEVMEM for out of memory ("out of device memory: N bytes asked for WHAT, M free
 * (hint)"; an injected failure says so instead of quoting the free memory), SIM_ENODEV or
 * SIM_EDEVICE for other CUDA errors (gpu_fail). `what` names the buffer for the message. Every
 * attempt counts for the switch, failed ones included. Thread-safe. */
int gpu_alloc_device(void **p, size_t bytes, const char *what, sim_err *err);

/* The same for page-locked host memory (asynchronous copies need it). Out of memory is
 * SIM_ENOMEM ("out of pinned host memory: ..."): it is the host that ran out. */
int gpu_alloc_pinned(void **p, size_t bytes, const char *what, sim_err *err);

/* Release memory from gpu_alloc_device / gpu_alloc_pinned, and only from them (the live counter
 * relies on it). NULL is a no-op. They return nothing: their callers are destroy paths with no
 * one to report to, and cudaFree fails only on a broken context, which the next checked call
 * reports; the error is cleared so that it is not mistaken for a later launch's. */
void gpu_alloc_free(void *d);
void gpu_alloc_free_pinned(void *h);

#endif
