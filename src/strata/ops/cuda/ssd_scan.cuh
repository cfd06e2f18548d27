// Kernel parameters shared by the two CUDA forms of the Mamba-2 SSD scan (recurrent in
// ssd_scan.cu, chunked in ssd_scan_chunked.cu), and the discretised time step both apply:
// dt = clamp(softplus(dt + dt_bias), dt_min, dt_max), as transformers computes it.
#pragma once

#include "strata/ops/cuda/common.cuh"

namespace strata::cuda {

struct SsdParams {
  const void* xbc;        // [T, nh * hd + 2 * groups * N] bf16 or f32, row stride `stride`: x | B | C
  const void* dt;         // [T, nh] same dtype as xbc
  const float* dt_bias;   // [nh] f32
  const float* A_log;     // [nh] f32
  const float* D;         // [nh] f32 or null
  float* state;           // [nh, hd, N] f32, in and out; [num_slots, nh, hd, N] with slots
  void* y;                // [T, nh, hd] same dtype as xbc
  float* intermediates;   // [T, nh, hd, N] f32 or null (recurrent form only)
  const int32_t* slots;   // [T] state slot of each single-token row, or null (recurrent form only)
  int64_t num_slots;      // slots of state when slots is set
  int64_t tokens, nh, hd, n, groups, stride;
  float dt_min, dt_max;
};

// Discretised time step of token t, head h.
template <typename T>
__device__ __forceinline__ float ssd_time_step(const SsdParams& p, int64_t t, int64_t h) {
  const float x = to_f32(static_cast<const T*>(p.dt)[t * p.nh + h]) + p.dt_bias[h];
  const float softplus = x > 20.0f ? x : log1pf(expf(x));
  return fminf(fmaxf(softplus, p.dt_min), p.dt_max);
}

// Chunked form (prefill rows): needs N a power of two in 16..256, hd % 32 == 0, no intermediates.
void launch_ssd_chunked(const SsdParams& p, DType dtype);

}  // namespace strata::cuda
