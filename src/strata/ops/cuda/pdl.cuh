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

// A launch's grid, block, dynamic shared memory and thread-block cluster (along x; 1: none).
struct LaunchShape {
  dim3 grid, block;
  size_t smem = 0;
  int cluster = 1;
};

template <typename... Params, typename... Args>
void launch_dependent(void (*kernel)(Params...), const LaunchShape& shape, cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attributes[2]{};
  attributes[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attributes[0].val.programmaticStreamSerializationAllowed = 1;
  attributes[1].id = cudaLaunchAttributeClusterDimension;
  attributes[1].val.clusterDim = {static_cast<unsigned>(shape.cluster), 1, 1};
  cudaLaunchConfig_t config{};
  config.gridDim = shape.grid;
  config.blockDim = shape.block;
  config.dynamicSmemBytes = shape.smem;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = shape.cluster > 1 ? 2 : 1;
  STRATA_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

template <typename... Params, typename... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                      Args&&... args) {
  launch_dependent(kernel, LaunchShape{grid, block, smem, 1}, stream, std::forward<Args>(args)...);
}

}  // namespace strata::cuda
