/* app_bench_gpu.h - the CUDA sections of `horizon bench` (app_gpu_bench*.cu, built when CUDA
 * is): a plain C API over the bench harness, which lives here in app/ and drives the CUDA
 * backend library (gpu/) through its headers, outside it. */
#ifndef APP_BENCH_GPU_H
#define APP_BENCH_GPU_H

#include <stdio.h>

#include "sim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs the GPU sections of `horizon bench`: copy bandwidth, Jacobi (one sweep per pass, fused),
 * horizon sums (tile-sum vs naive vs the seed-000 Thrust approach), the large scenario's full
 * step on GPU and CPU, the Laplace exercise and the tile-mapping strategies. quick: smaller sizes
 * and fewer repetitions; size: side of the large scenario's square grid (0: 4096). Writes a text
 * table to `table` and, when json is not NULL, one JSON object member `"gpu": {...}` (no
 * trailing comma or newline). Returns SIM_ENODEV without a device, SIM_EDEVMEM when a size does
 * not fit, SIM_EINVAL when a result check fails. */
int gpu_bench_run(int quick, int size, FILE *table, FILE *json, sim_err *err);

/* The models section of `horizon bench` alone (`--models-only`): the CUDA model engine vs the
 * CPU model engine on a wolf-sheep-grass model at size^2 (0: 4096; 1M agents at 4096^2, scaled
 * with the area), and a two-species two-field model vs the fast path. Output and failures as
 * gpu_bench_run. */
int gpu_bench_models_run(int quick, int size, FILE *table, FILE *json, sim_err *err);

#ifdef __cplusplus
}
#endif

#endif
