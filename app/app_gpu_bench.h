/* app_gpu_bench.h - what the GPU bench sections (app_gpu_bench*.cu) share: the context (output
 * streams, stream, the measured copy bandwidth), event timing with warm-up and medians, JSON
 * member separators.
 * Internal to the bench (C++). */
#ifndef GPU_BENCH_H
#define GPU_BENCH_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu_check.h"

typedef struct gpu_bench_ctx {
    int quick;
    FILE *table, *json;
    cudaStream_t s;
    cudaEvent_t e0, e1;
    double copy_gbs;   /* measured device-to-device copy, read + write, GB/s */
    int members;       /* JSON members written so far inside "gpu" */
    int failed;        /* result checks that failed (reported as NO, the bench goes on) */
    char device[256];
} gpu_bench_ctx;

/* Median of n values (sorts v). */
double gpu_bench_median(double *v, int n);

/* Starts the next JSON member inside "gpu": a separator when one came before. */
void gpu_bench_member(gpu_bench_ctx *c);

/* Horizon sums (tile-sum vs naive vs Thrust) on a side^2 field with side^2/16 agents, and the
 * tile mappings (app_gpu_bench_hz.cu). */
int gpu_bench_horizon(gpu_bench_ctx *c, int side, sim_err *err);

/* The models section (app_gpu_bench_model.cu): the CUDA model engine vs the CPU model engine on a
 * wolf-sheep-grass model, and a two-species two-field step vs the fast path. */
int gpu_bench_models(gpu_bench_ctx *c, int side, sim_err *err);

/* Runs f (returning a sim_status) once to warm up, then `reps` times between events on c->s;
 * *ms = the median time of one run in milliseconds. */
template <class F> static int gpu_bench_time(gpu_bench_ctx *c, int reps, F f, double *ms, sim_err *err)
{
    double t[64];
    if (reps > 64)
        reps = 64;
    GPU_TRY(f());
    GPU_CHECK(err, cudaStreamSynchronize(c->s));
    for (int i = 0; i < reps; i++) {
        float m = 0.0f;
        GPU_CHECK(err, cudaEventRecord(c->e0, c->s));
        GPU_TRY(f());
        GPU_CHECK(err, cudaEventRecord(c->e1, c->s));
        GPU_CHECK(err, cudaEventSynchronize(c->e1));
        GPU_CHECK(err, cudaEventElapsedTime(&m, c->e0, c->e1));
        t[i] = m;
    }
    *ms = gpu_bench_median(t, reps);
    return SIM_OK;
}

#endif
