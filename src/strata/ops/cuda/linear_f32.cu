#include "strata/ops/cuda/linear_f32.h"

#include "strata/ops/cuda/common.cuh"

namespace strata::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;

struct LinearF32Params {
  const float* x;       // [M, K]
  const float* weight;  // [N, K]
  const float* bias;    // [N] or null
  float* out;           // [M, N]
  int64_t n, k;
  bool accumulate;
};

__global__ void linear_f32_kernel(LinearF32Params p) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32, row = blockIdx.y;
  if (col >= p.n) return;
  const int lane = threadIdx.x % 32;
  const float* x = p.x + row * p.k;
  const float* w = p.weight + col * p.k;
  float acc = 0.f;
  for (int64_t i = lane; i < p.k; i += 32) acc += x[i] * w[i];
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane != 0) return;
  if (p.bias != nullptr) acc += p.bias[col];
  float* dst = p.out + row * p.n + col;
  *dst = p.accumulate ? *dst + acc : acc;
}

}  // namespace

void linear_f32(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out, bool accumulate) {
  if (bias.defined() && bias.dtype() != DType::kF32) unsupported_dtype("linear f32 bias", bias.dtype());
  if (out.dtype() != DType::kF32) unsupported_dtype("linear f32 out", out.dtype());
  if (x.dim(0) == 0) return;
  const LinearF32Params p{.x = x.data_as<float>(), .weight = weight.data_as<float>(),
                          .bias = bias.defined() ? bias.data_as<float>() : nullptr, .out = out.data_as<float>(),
                          .n = weight.dim(0), .k = weight.dim(1), .accumulate = accumulate};
  const dim3 grid(static_cast<unsigned>(ceil_div(p.n, kWarpsPerBlock)), static_cast<unsigned>(x.dim(0)));
  linear_f32_kernel<<<grid, kWarpsPerBlock * 32, 0, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
