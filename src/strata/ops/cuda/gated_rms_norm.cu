// CUDA gated RMS norms of the recurrent layers: one block per (row, group), f32 math.
//   kNormThenGate: out = w * rmsnorm(x) * act(z);  kGateThenNorm: out = w * rmsnorm(x * act(z)),
// act silu or sigmoid.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/gated_rms_norm.h"

namespace strata::cuda {
namespace {

struct GatedNormParams {
  const void* x;       // [N, D]
  const void* z;       // [N, D]
  const float* w;      // [D]
  void* out;           // [N, D], may alias x
  int64_t dim, group;
  float eps;
  bool gate_first, sigmoid_gate;
};

__device__ __forceinline__ float gate_value(const GatedNormParams& p, float v) {
  return p.sigmoid_gate ? 1.0f / (1.0f + expf(-v)) : v / (1.0f + expf(-v));
}

template <typename T>
__global__ void gated_rms_norm_kernel(GatedNormParams p) {
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x, first = static_cast<int64_t>(blockIdx.y) * p.group;
  const T* x = static_cast<const T*>(p.x) + row * p.dim + first;
  const T* z = static_cast<const T*>(p.z) + row * p.dim + first;
  T* out = static_cast<T*>(p.out) + row * p.dim + first;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < p.group; i += blockDim.x) {
    const float v = p.gate_first ? to_f32(x[i]) * gate_value(p, to_f32(z[i])) : to_f32(x[i]);
    sum += v * v;
  }
  sum = block_sum(sum, scratch);
  const float inv = rsqrtf(sum / static_cast<float>(p.group) + p.eps);
  for (int64_t i = threadIdx.x; i < p.group; i += blockDim.x) {
    const float gate = gate_value(p, to_f32(z[i]));
    const float v = p.gate_first ? to_f32(x[i]) * gate * inv : to_f32(x[i]) * inv * gate;
    out[i] = from_f32<T>(v * p.w[first + i]);
  }
}

}  // namespace

void gated_rms_norm(const Tensor& x, const Tensor& z, const Tensor& weight, const Tensor& out,
                    const ops::GatedRmsNormOptions& options) {
  const int64_t rows = x.dim(0), dim = x.dim(1);
  if (rows == 0) return;
  const int64_t group = options.group_size > 0 ? options.group_size : dim;
  STRATA_CHECK(dim % group == 0 && z.dtype() == x.dtype() && out.dtype() == x.dtype());
  if (weight.dtype() != DType::kF32) unsupported_dtype("gated_rms_norm weight (f32)", weight.dtype());
  const GatedNormParams p{.x = x.data(), .z = z.data(), .w = weight.data_as<float>(), .out = out.data(),
                          .dim = dim, .group = group, .eps = options.eps,
                          .gate_first = options.order == ops::GateOrder::kGateThenNorm,
                          .sigmoid_gate = options.gate == ops::GateActivation::kSigmoid};
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(dim / group));
  const int threads = group >= 512 ? 256 : 64;
  if (x.dtype() == DType::kBF16) {
    gated_rms_norm_kernel<__nv_bfloat16><<<grid, threads, 0, current_stream()>>>(p);
  } else if (x.dtype() == DType::kF32) {
    gated_rms_norm_kernel<float><<<grid, threads, 0, current_stream()>>>(p);
  } else {
    unsupported_dtype("gated_rms_norm", x.dtype());
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
