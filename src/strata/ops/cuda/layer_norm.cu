// CUDA LayerNorm with weight and bias: one block per row, f32 math, mean first, then the
// variance of the centred values (as the CPU's two passes, so large means cost no precision).
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/layer_norm.h"

namespace strata::cuda {
namespace {

struct LayerNormKernelParams {
  const void* x;      // [N, D]
  const float* w;     // [D]
  const float* b;     // [D]
  void* out;          // [N, D], may alias x
  int64_t dim;
  float eps;
};

template <typename T>
__global__ void layer_norm_kernel(LayerNormKernelParams p) {
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x;
  const T* x = static_cast<const T*>(p.x) + row * p.dim;
  T* out = static_cast<T*>(p.out) + row * p.dim;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < p.dim; i += blockDim.x) sum += to_f32(x[i]);
  const float mean = block_sum(sum, scratch) / static_cast<float>(p.dim);
  float squares = 0.0f;
  for (int64_t i = threadIdx.x; i < p.dim; i += blockDim.x) {
    const float d = to_f32(x[i]) - mean;
    squares += d * d;
  }
  const float inv = rsqrtf(block_sum(squares, scratch) / static_cast<float>(p.dim) + p.eps);
  for (int64_t i = threadIdx.x; i < p.dim; i += blockDim.x)
    out[i] = from_f32<T>((to_f32(x[i]) - mean) * inv * p.w[i] + p.b[i]);
}

}  // namespace

void layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, const Tensor& out) {
  const int64_t rows = x.dim(0);
  if (rows == 0) return;
  const LayerNormKernelParams p{.x = x.data(), .w = weight.data_as<float>(), .b = bias.data_as<float>(),
                                .out = out.data(), .dim = x.dim(1), .eps = eps};
  const int threads = p.dim >= 1024 ? 512 : (p.dim >= 256 ? 128 : 64);
  if (x.dtype() == DType::kBF16)
    layer_norm_kernel<__nv_bfloat16><<<rows, threads, 0, current_stream()>>>(p);
  else if (x.dtype() == DType::kF32)
    layer_norm_kernel<float><<<rows, threads, 0, current_stream()>>>(p);
  else
    unsupported_dtype("layer_norm", x.dtype());
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
