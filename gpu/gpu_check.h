/* gpu_check.h - the one place where CUDA errors become sim_status codes. Every CUDA call and
 * every launch in gpu/ goes through GPU_CHECK / GPU_CHECK_LAUNCH, which return from the calling
 * function with a status and "file:line: call: CUDA message" in err. */
#ifndef GPU_CHECK_H
#define GPU_CHECK_H

#include <cuda_runtime.h>

extern "C" {
#include "sim_status.h"
}

/* Maps a CUDA error to a status (SIM_EDEVMEM for allocation failures, SIM_ENODEV for a missing
 * driver or device, SIM_EDEVICE otherwise) and writes the message; `what` is the call's text. */
int gpu_fail(sim_err *err, cudaError_t e, const char *file, int line, const char *what);

/* The error of the last launch. Debug builds (HORIZON_GPU_SYNC defined) also wait for the
 * device, so that a failing kernel is reported at its own launch, except while a stream is
 * being captured into a graph (synchronising would break the capture). */
cudaError_t gpu_launch_status(cudaStream_t s);

#define GPU_CHECK(err, call)                                                        \
    do {                                                                            \
        cudaError_t gpu_e_ = (call);                                                \
        if (gpu_e_ != cudaSuccess)                                                  \
            return gpu_fail((err), gpu_e_, __FILE__, __LINE__, #call);              \
    } while (0)

#define GPU_CHECK_LAUNCH(err, stream)                                               \
    do {                                                                            \
        cudaError_t gpu_e_ = gpu_launch_status(stream);                             \
        if (gpu_e_ != cudaSuccess)                                                  \
            return gpu_fail((err), gpu_e_, __FILE__, __LINE__, "kernel launch");    \
    } while (0)

/* For functions that return a status: propagates a non-zero rc. */
#define GPU_TRY(...)                                                                \
    do {                                                                            \
        int gpu_rc_ = (__VA_ARGS__);                                                \
        if (gpu_rc_ != 0)                                                           \
            return gpu_rc_;                                                         \
    } while (0)

/* Out of device memory with the numbers a user needs. */
int gpu_fail_devmem(sim_err *err, size_t asked, const char *what);

/* A measuring aid's on/off environment variable `name`: set to "0" or "1", *on becomes 0 or 1;
 * unset or empty, *on is left as it is; anything else is an error naming the variable and its
 * value. */
int gpu_env_switch(const char *name, int *on, sim_err *err);

#endif
