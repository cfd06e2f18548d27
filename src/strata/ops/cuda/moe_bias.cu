// CUDA grouped bias: one block per row; the row's expert is found by a binary search over the
// offsets on the device (rows are sorted by expert), so no host sync and graph-capturable.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/moe.h"

namespace strata::cuda {
namespace {

struct GroupedBiasParams {
  void* y;                  // [rows, n]
  const float* bias;        // [experts, n]
  const int32_t* offsets;   // [experts + 1] or null (one bias row for all)
  int64_t n, experts;
};

// The expert e with offsets[e] <= row < offsets[e + 1] (the last such e for empty experts).
__device__ int64_t expert_of_row(const int32_t* offsets, int64_t experts, int64_t row) {
  int64_t lo = 0, hi = experts;  // invariant: offsets[lo] <= row, answer in [lo, hi)
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    if (offsets[mid] <= row) lo = mid; else hi = mid;
  }
  return lo;
}

template <typename T>
__global__ void grouped_bias_kernel(GroupedBiasParams p) {
  const int64_t row = blockIdx.x;
  if (p.offsets != nullptr && row >= p.offsets[p.experts]) return;  // another rank's expert
  const int64_t e = p.offsets != nullptr ? expert_of_row(p.offsets, p.experts, row) : 0;
  T* y = static_cast<T*>(p.y) + row * p.n;
  const float* b = p.bias + e * p.n;
  for (int64_t c = threadIdx.x; c < p.n; c += blockDim.x) y[c] = from_f32<T>(to_f32(y[c]) + b[c]);
}

}  // namespace

void add_grouped_bias(const Tensor& y, const Tensor& bias, const Tensor& expert_offsets) {
  const int64_t rows = y.dim(0);
  if (rows == 0) return;
  const GroupedBiasParams p{.y = y.data(), .bias = bias.data_as<const float>(),
                            .offsets = expert_offsets.defined() ? expert_offsets.data_as<const int32_t>() : nullptr,
                            .n = y.dim(1), .experts = bias.dim(0)};
  if (y.dtype() == DType::kBF16) {
    grouped_bias_kernel<__nv_bfloat16><<<rows, 256, 0, current_stream()>>>(p);
  } else {
    grouped_bias_kernel<float><<<rows, 256, 0, current_stream()>>>(p);
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
