/* gpu_pdl.cuh - programmatic dependent launch of the fast path's step kernels (worlds of up to
 * GPU_PDL_CELLS_MAX cells, gpu_step_pdl_choose). A kernel launched with gpu_launch(pdl = 1, ...)
 * may start while the kernel before it on the stream is still finishing; it must call
 * gpu_pdl_wait() before it reads or writes anything its predecessors touch, and every block must
 * call it (a kernel's completion then implies its predecessors', which the kernels after it
 * rely on). gpu_pdl_release() lets the next kernel's blocks be scheduled from then on. Both are
 * no-ops in a kernel launched without the attribute (and before sm_90). Internal to gpu/ (CUDA
 * C++). */
#ifndef GPU_PDL_CUH
#define GPU_PDL_CUH

#include <cuda_runtime.h>

__device__ __forceinline__ void gpu_pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void gpu_pdl_release()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Launches kernel<<<grid, block, smem, s>>>(args...), with pdl the programmatic stream
 * serialization attribute (the launch may overlap the previous kernel on s; also inside a
 * stream capture, where it becomes a programmatic edge of the graph). Returns the launch's
 * error, which is also the runtime's last error: the helpers that return no status
 * (gpu_jacobi.cu's pass launches) leave it to the GPU_CHECK_LAUNCH after them. */
template <typename... P, typename... A>
static inline cudaError_t gpu_launch(int pdl, void (*kernel)(P...), dim3 grid, dim3 block,
                                     size_t smem, cudaStream_t s, A... args)
{
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = pdl ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, kernel, args...);
}

#endif
