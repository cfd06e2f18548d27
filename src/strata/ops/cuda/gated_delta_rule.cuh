// Kernel parameters shared by the two CUDA forms of the gated delta rule (recurrent in
// gated_delta_rule.cu, chunked in gated_delta_rule_chunked.cu), and the gating both apply:
// g = -exp(A_log) * softplus(a + dt_bias), beta = sigmoid(b), as transformers computes them.
#pragma once

#include "strata/ops/cuda/common.cuh"

namespace strata::cuda {

struct GdnParams {
  const void* qkv;        // [T, 2 * nk * dk + nv * dv] bf16 or f32, row stride `stride`
  const void* a;          // [T, nv] same dtype as qkv
  const void* b;          // [T, nv] same dtype as qkv
  const float* A_log;     // [nv] f32
  const float* dt_bias;   // [nv] f32
  float* state;           // [nv, dk, dv] f32, in and out; [num_slots, nv, dk, dv] with slots
  void* out;              // [T, nv, dv] same dtype as qkv
  float* intermediates;   // [T, nv, dk, dv] f32 or null (recurrent form only)
  const int32_t* slots;   // [T] state slot of each single-token row, or null (recurrent form only)
  int64_t num_slots;      // slots of state when slots is set
  int64_t tokens, nv, nk, dk, dv, stride;
  float scale;            // 1 / sqrt(dk)
};

// Log decay g and beta of token t, value head h.
template <typename T>
__device__ __forceinline__ float2 gdn_gate(const GdnParams& p, int64_t t, int64_t h) {
  const float x = to_f32(static_cast<const T*>(p.a)[t * p.nv + h]) + p.dt_bias[h];
  const float softplus = x > 20.0f ? x : log1pf(expf(x));
  const float g = -expf(p.A_log[h]) * softplus;
  const float beta = 1.0f / (1.0f + expf(-to_f32(static_cast<const T*>(p.b)[t * p.nv + h])));
  return make_float2(g, beta);
}

// Chunked form (prefill rows): needs dk in {32, 64, 128}, dv % 32 == 0, no intermediates.
void launch_gdn_chunked(const GdnParams& p, DType dtype);

}  // namespace strata::cuda
