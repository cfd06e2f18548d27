// Programmatic dependent launch: a kernel launched with launch_dependent may start while the
// kernel before it in the stream still runs (its blocks resident, weights being fetched), and
// calls wait_for_previous_kernel() before it reads that kernel's outputs or writes anything.
// In a CUDA graph the edge is kept, so decode steps lose the launch gap between kernels.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "strata/backend/cuda/cuda_check.h"

namespace strata::cuda {

// Returns once the previous kernel has finished and its writes are visible (a no-op when this
// kernel was launched the ordinary way).
__device__ __forceinline__ void wait_for_previous_kernel() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }

// Lets the next kernel, if launched with launch_dependent, start once every block got here.
__device__ __forceinline__ void allow_next_kernel() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }

template <typename... Params, typename... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                      Args&&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  STRATA_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

}  // namespace strata::cuda
