// CUDA RMSNorm, optionally fused with the residual add before it: one block per row, f32
// math. With a residual, the sum is stored back in the residual's dtype and the norm is
// taken of that stored value, so later layers and this norm see the same numbers.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/rms_norm.h"

namespace strata::cuda {
namespace {

struct RmsNormKernelParams {
  const void* x;    // [N, D]
  void* residual;   // [N, D] or null
  const void* w;    // [D]
  void* out;        // [N, D], may alias x
  int64_t dim;
  float eps;
  float weight_offset;  // 1 for unit-offset weights
};

template <typename T, typename W>
__global__ void rms_norm_kernel(RmsNormKernelParams p) {
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x;
  const T* x = static_cast<const T*>(p.x) + row * p.dim;
  T* res = p.residual != nullptr ? static_cast<T*>(p.residual) + row * p.dim : nullptr;
  T* out = static_cast<T*>(p.out) + row * p.dim;
  const W* w = static_cast<const W*>(p.w);
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < p.dim; i += blockDim.x) {
    float v = to_f32(x[i]);
    if (res != nullptr) {
      const T stored = from_f32<T>(to_f32(res[i]) + v);
      res[i] = stored;
      v = to_f32(stored);
    }
    sum += v * v;
  }
  sum = block_sum(sum, scratch);
  const float inv = rsqrtf(sum / static_cast<float>(p.dim) + p.eps);
  const T* src = res != nullptr ? res : x;
  for (int64_t i = threadIdx.x; i < p.dim; i += blockDim.x)
    out[i] = from_f32<T>(to_f32(src[i]) * inv * (to_f32(w[i]) + p.weight_offset));
}

template <typename T>
void launch_for_weight(const RmsNormKernelParams& p, DType weight_dtype, int64_t rows) {
  const int threads = p.dim >= 1024 ? 512 : (p.dim >= 256 ? 128 : 64);
  const cudaStream_t stream = current_stream();
  if (weight_dtype == DType::kBF16) {
    rms_norm_kernel<T, __nv_bfloat16><<<rows, threads, 0, stream>>>(p);
  } else if (weight_dtype == DType::kF32) {
    rms_norm_kernel<T, float><<<rows, threads, 0, stream>>>(p);
  } else {
    unsupported_dtype("rms_norm weight", weight_dtype);
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace

void rms_norm(const Tensor& x, const Tensor* residual_in, const Tensor& weight, const Tensor& out,
              const ops::RmsNormParams& params) {
  const int64_t rows = x.dim(0);
  if (rows == 0) return;
  STRATA_CHECK(out.dtype() == x.dtype());
  if (residual_in != nullptr) STRATA_CHECK(residual_in->dtype() == x.dtype());
  const RmsNormKernelParams p{.x = x.data(),
                              .residual = residual_in != nullptr ? residual_in->data() : nullptr,
                              .w = weight.data(), .out = out.data(), .dim = x.dim(1),
                              .eps = params.eps, .weight_offset = params.unit_offset ? 1.0f : 0.0f};
  if (x.dtype() == DType::kBF16) {
    launch_for_weight<__nv_bfloat16>(p, weight.dtype(), rows);
  } else if (x.dtype() == DType::kF32) {
    launch_for_weight<float>(p, weight.dtype(), rows);
  } else {
    unsupported_dtype("rms_norm", x.dtype());
  }
}

}  // namespace strata::cuda
