// Helpers shared by the CUDA op kernels: launch checks, grid sizing, and loading and
// storing activations as f32 whatever their storage type (bf16 on the GPU, f32 for logits).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <string>

#include "strata/backend/cuda/cuda_check.h"
#include "strata/core/error.h"
#include "strata/core/tensor.h"

// Every launch is followed by this: a bad configuration is a programming error, fatal.
#define STRATA_CUDA_CHECK_LAUNCH() STRATA_CUDA_CHECK(cudaGetLastError())

namespace strata::cuda {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Streaming multiprocessors of the current device (asked once).
inline int num_sms() {
  static const int count = [] {
    int device = 0, sms = 0;
    STRATA_CUDA_CHECK(cudaGetDevice(&device));
    STRATA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
  }();
  return count;
}

// Blocks for a grid-stride loop over n elements: enough to fill the chip, capped.
inline unsigned grid_for(int64_t n, int threads) {
  const int64_t blocks = ceil_div(n, threads);
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 * 4 ? 65535 * 4 : blocks));
}

// A dtype this backend's kernels do not take: an Error naming the op and the dtype.
[[noreturn]] inline void unsupported_dtype(const char* op, DType dtype) {
  throw Error(std::string(op) + ": dtype " + std::string(dtype_name(dtype)) +
              " is not supported on CUDA (bf16 or f32 expected)");
}

// Asks for the line holding ptr in L2 without waiting for it (a later load of it hits L2).
__device__ __forceinline__ void prefetch_l2(const void* ptr) { asm volatile("prefetch.global.L2 [%0];" ::"l"(ptr)); }

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }

template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half_rn(v); }

template <typename T> __device__ __forceinline__ float load_f32(const T* p, int64_t i) {
  return to_f32(p[i]);
}

// Sum over a block of blockDim.x threads (a multiple of 32, at most 1024); every thread
// gets the total. `scratch` holds 32 floats.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int num_warps = blockDim.x / 32;
  float total = lane < num_warps ? scratch[lane] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) total += __shfl_xor_sync(0xffffffffu, total, o);
  return total;
}

// Block-wide argmax, ties to the lowest index; every thread gets the winner. vals, idxs:
// shared scratch of 32 entries each.
__device__ inline void block_argmax(float& value, int& index, float* vals, int* idxs) {
  for (int o = 16; o > 0; o >>= 1) {
    const float v = __shfl_xor_sync(0xffffffffu, value, o);
    const int i = __shfl_xor_sync(0xffffffffu, index, o);
    if (v > value || (v == value && i < index)) value = v, index = i;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) vals[warp] = value, idxs[warp] = index;
  __syncthreads();
  value = lane < blockDim.x / 32 ? vals[lane] : -INFINITY;
  index = lane < blockDim.x / 32 ? idxs[lane] : INT_MAX;
  for (int o = 16; o > 0; o >>= 1) {
    const float v = __shfl_xor_sync(0xffffffffu, value, o);
    const int i = __shfl_xor_sync(0xffffffffu, index, o);
    if (v > value || (v == value && i < index)) value = v, index = i;
  }
}

// The largest of values[0, n) (shared memory) over the block, ties to the lowest index;
// every thread gets it. vals, idxs: block_argmax's scratch.
__device__ inline void block_max_of(const float* values, int64_t n, float& best, int& best_index, float* vals,
                                    int* idxs) {
  best = -INFINITY;
  best_index = INT_MAX;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
    if (values[i] > best) best = values[i], best_index = static_cast<int>(i);
  block_argmax(best, best_index, vals, idxs);
}

}  // namespace strata::cuda
