/* gpu_backend.h - the CUDA backend's plain C API: the backend table that sim.h drives, device
 * probing and reporting for `horizon info`, a tuning hook on a sim object for tests and the
 * bench (app/app_gpu_bench*.cu), and the allocation-failure test hooks. Nothing here
 * needs CUDA headers; the .cu files implement it. */
#ifndef GPU_BACKEND_H
#define GPU_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "sim.h"
#include "sim_backend.h"
#include "sim_scenario.h"
#include "sim_status.h"

/* The CUDA backend table ("cuda"). Its create fails with SIM_ENODEV when no usable device or
 * driver is present and with SIM_EDEVMEM (bytes asked, bytes free, a hint) when the world does
 * not fit in device memory. Results are bit-identical to sim_cpu_backend(). */
const sim_backend_ops *gpu_cuda_backend(void);

/* The CUDA model engine ("cuda"; sim_backend.h: a model engine, created from a state): every
 * model (fields, walls, sources, growth, species, the life cycle, predation) with the results of
 * sim_cpu_model_backend() bit for bit, step by step. gpu_cuda_backend() names it in `models`, so
 * that sim.h runs every model that is not plain on it. Its create_state fails with SIM_ENODEV
 * ("cuda model engine: no CUDA device" and the like) without a usable device or driver, and with
 * SIM_EDEVMEM when the world does not fit. */
const sim_backend_ops *gpu_cuda_model_backend(void);

/* Device memory in bytes that the model engine's create takes for a scenario's model at the
 * start (gpu_model_memory's total); the agent arrays double when births need room. 0 when the
 * model does not build. */
size_t gpu_model_estimate_bytes(const sim_scenario *sc);

/* The model engine's device memory for a scenario's model at the start, split as sim_mem states
 * it (sim_backend.h): shared_per_cell (occupancy and claim words: 12), field_per_cell (the values
 * and each field's share of the one spare array: 4 + 4 / n_fields), maps_per_cell (capacity maps
 * and source masks together), per_agent (bytes per agent slot, every per-agent array and the
 * compaction's scratch; slots = agents, or min(2 * agents, cells) when a species breeds),
 * life_attrs (2 with a life cycle, else 0), other (parameters, control, column sums) and total
 * (what create allocates, exact to the byte for a state built from the scenario; a uniform
 * capacity map, which create keeps off the device, is counted). No device needed. SIM_OK, or
 * SIM_EINVAL when the model does not build (*out zeroed), SIM_ENOMEM without host memory. */
int gpu_model_memory(const sim_scenario *sc, sim_mem *out);

/* The device bytes and the blocks (device and pinned, as gpu_alloc_live counts them) that a
 * model engine instance holds now: state is sim_get_backend_state of a sim on
 * gpu_cuda_model_backend(). For tests. */
void gpu_model_held(const void *state, size_t *bytes, long *blocks);

/* How many chunks of queued steps that instance cut short so far: a step's commit found the
 * agents past the chunk's launch bound or without room to double (gpu_model.h). For tests. */
long gpu_model_halts(const void *state);

/* How many steps that instance ran without compacting its agents (holes left, newborns
 * appended in place; gpu_model.h). For tests. */
long gpu_model_in_place(const void *state);

/* Number of usable CUDA devices. When 0, `why` (n bytes, may be NULL) gets a one-line reason
 * ("no CUDA driver", "no CUDA device", ...). Never aborts, also without a driver. */
int gpu_probe(char *why, size_t n);

/* Turns the reuse of device and pinned allocations on or off (off at start). While on, memory an
 * instance gives back is kept for the next instance that asks for the same size on the same
 * device, so that a sweep of many equal worlds sets runs up without cudaMalloc / cudaFree (they
 * serialise on a driver lock and wait for the whole device). Turning it off frees what is kept.
 * Allocation failures (and the HORIZON_GPU_FAIL_ALLOC hook) behave the same either way. */
void gpu_alloc_pool(int on);

/* Makes device `dev` (0 .. gpu_probe()-1) the calling thread's current device, so that the
 * instances this thread creates live there (an instance keeps to the device it was created on
 * and must be stepped from a thread whose current device it is). SIM_ENODEV with the reason when
 * the device cannot be used. */
int gpu_use_device(int dev, sim_err *err);

/* Prints the devices (name, compute capability, multiprocessors, free/total memory) to f, and for
 * a scenario (may be NULL) the device memory the CUDA backend would allocate for it. */
void gpu_info_print(FILE *f, const sim_scenario *sc);

/* Device memory in bytes that create allocates for a scenario (an upper bound). */
size_t gpu_estimate_bytes(const sim_scenario *sc);

/* Tuning of the CUDA instance behind a sim object. Zero fields keep the automatic choice. */
enum { GPU_HMODE_AUTO = 0, GPU_HMODE_DENSE = 1, GPU_HMODE_SPARSE = 2 };
/* Tile mappings: three persistent grids (seed 003: rake = a contiguous run of tiles per block,
 * strip-mine = every gridDim-th tile, dynamic = an atomic queue), one block per tile, and
 * SELL-C-sigma (seed 004: tiles sorted by agent count within windows, an atomic queue of slices
 * of C tiles served together; sparse mode only, elsewhere it runs as dynamic). */
enum { GPU_MAP_AUTO = 0, GPU_MAP_RAKE = 1, GPU_MAP_STRIP = 2, GPU_MAP_DYNAMIC = 3,
       GPU_MAP_BLOCK = 4, GPU_MAP_SELL = 5 };
typedef struct gpu_tuning {
    int horizon_mode; /* GPU_HMODE_* */
    int mapping;      /* GPU_MAP_* (how tiles are handed to thread blocks) */
    int fuse_max;     /* most Jacobi sweeps fused in one pass, 1..8; 0: automatic (8) */
    int steps_per_graph; /* steps of a batch captured in one graph, 1..32; 0: automatic (1) */
    int resident;     /* batches without statistics in one kernel (GPU_RES_*) */
} gpu_tuning;
/* The resident kernels of tiny worlds (gpu_step_resident.cu): automatic (the one-block kernel
 * where the world fits it and has at most GPU_TINY_CELLS_AUTO cells, else the cooperative grid
 * for worlds of at most GPU_RES_CELLS_MAX cells, gpu_policy.h), never, the cooperative grid
 * whenever the device can launch it, or the one-block kernel wherever the world fits it (else as
 * GPU_RES_ON). */
enum { GPU_RES_AUTO = 0, GPU_RES_OFF = 1, GPU_RES_ON = 2, GPU_RES_TINY = 3 };

/* Applies t to the CUDA instance of s; SIM_EINVAL (message in err) for out-of-range values or
 * when s runs on another backend. */
int gpu_tune(sim *s, const gpu_tuning *t, sim_err *err);

/* The horizon mode the CUDA instance of s uses now (GPU_HMODE_DENSE or GPU_HMODE_SPARSE);
 * GPU_HMODE_AUTO when s runs on another backend. */
int gpu_horizon_mode(sim *s);

/* 1 when the CUDA instance of s runs its batches' steps without statistics in the one-block
 * kernel of tiny worlds (gpu_step_resident.cu), else 0. */
int gpu_tiny_kernel(sim *s);

/* Test hooks of the device allocation door (gpu_alloc.h), mirroring sim_alloc.h's. Every device
 * allocation (cudaMalloc) and pinned host allocation (cudaMallocHost) that gpu/ makes, in the
 * backend and the bench alike, counts as one attempt.
 * gpu_alloc_fail_at(n): attempt number n (1-based, counted from this call) and only that one
 * fails as if out of memory (SIM_EDEVMEM, or SIM_ENOMEM for pinned host memory); n = 0 switches
 * failures off. The environment variable HORIZON_GPU_FAIL_ALLOC=N calls gpu_alloc_fail_at(N)
 * once, at the process's first allocation through the door, so that the binary can be tested
 * (`HORIZON_GPU_FAIL_ALLOC=3 horizon run --backend cuda` exits 3); it overrides a switch set
 * before that first allocation. */
void gpu_alloc_fail_at(long n);
/* Attempts since the last gpu_alloc_fail_at call (failed ones included). */
long gpu_alloc_attempts(void);
/* Blocks (device and pinned) allocated through the door and not yet freed, over the process. */
long gpu_alloc_live(void);

#ifdef __cplusplus
}
#endif

#endif
