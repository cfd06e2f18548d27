// CUDA RMSNorm, optionally fused with the residual add before it: one block per row, f32
// math. With a residual, the sum is stored back in the residual's dtype and the norm is
// taken of that stored value, so later layers and this norm see the same numbers.
#include <type_traits>

#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/pdl.cuh"
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
  allow_next_kernel();  // the next kernel may get resident and fetch its weights
  wait_for_previous_kernel();
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

// bf16 rows of up to 8192 elements, a multiple of 8: each thread owns one 16-byte chunk, so
// x and the residual are read once and the row stays in registers between the two passes.
template <typename W>
__global__ void rms_norm_chunked_kernel(RmsNormKernelParams p) {
  allow_next_kernel();  // the next kernel may get resident and fetch its weights
  wait_for_previous_kernel();
  __shared__ float scratch[32];
  using bf16 = __nv_bfloat16;
  const int64_t row = blockIdx.x;
  const int chunk = threadIdx.x;
  const bool mine = chunk < p.dim / 8;
  const int64_t offset = row * p.dim + chunk * 8;
  float v[8] = {};
  float sum = 0.0f;
  if (mine) {
    uint4 xv = *reinterpret_cast<const uint4*>(static_cast<const bf16*>(p.x) + offset);
    const bf16* xs = reinterpret_cast<const bf16*>(&xv);
    if (p.residual != nullptr) {
      uint4 rv = *reinterpret_cast<const uint4*>(static_cast<const bf16*>(p.residual) + offset);
      bf16* rs = reinterpret_cast<bf16*>(&rv);
#pragma unroll
      for (int j = 0; j < 8; ++j) rs[j] = __float2bfloat16_rn(__bfloat162float(rs[j]) + __bfloat162float(xs[j]));
      *reinterpret_cast<uint4*>(static_cast<bf16*>(p.residual) + offset) = rv;
      xs = rs;
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = __bfloat162float(xs[j]);
    } else {
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = __bfloat162float(xs[j]);
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) sum += v[j] * v[j];
  }
  sum = block_sum(sum, scratch);
  if (!mine) return;
  const float inv = rsqrtf(sum / static_cast<float>(p.dim) + p.eps);
  const W* w = static_cast<const W*>(p.w) + chunk * 8;
  uint4 ov;
  bf16* os = reinterpret_cast<bf16*>(&ov);
#pragma unroll
  for (int j = 0; j < 8; ++j) os[j] = __float2bfloat16_rn(v[j] * inv * (to_f32(w[j]) + p.weight_offset));
  *reinterpret_cast<uint4*>(static_cast<bf16*>(p.out) + offset) = ov;
}

bool chunked_kernel_fits(const RmsNormKernelParams& p) {
  const auto aligned = [](const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; };
  return p.dim % 8 == 0 && p.dim <= 8 * 1024 && aligned(p.x) && aligned(p.out) &&
         (p.residual == nullptr || aligned(p.residual));
}

template <typename T>
void launch_for_weight(const RmsNormKernelParams& p, DType weight_dtype, int64_t rows) {
  const int threads = p.dim >= 1024 ? 512 : (p.dim >= 256 ? 128 : 64);
  const cudaStream_t stream = current_stream();
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    if (chunked_kernel_fits(p) && (weight_dtype == DType::kBF16 || weight_dtype == DType::kF32)) {
      const int chunk_threads = static_cast<int>(ceil_div(p.dim / 8, 32) * 32);
      if (weight_dtype == DType::kBF16) {
        launch_dependent(rms_norm_chunked_kernel<__nv_bfloat16>, dim3(rows), dim3(chunk_threads), 0, stream, p);
      } else {
        launch_dependent(rms_norm_chunked_kernel<float>, dim3(rows), dim3(chunk_threads), 0, stream, p);
      }
      STRATA_CUDA_CHECK_LAUNCH();
      return;
    }
  }
  if (weight_dtype == DType::kBF16) {
    launch_dependent(rms_norm_kernel<T, __nv_bfloat16>, dim3(rows), dim3(threads), 0, stream, p);
  } else if (weight_dtype == DType::kF32) {
    launch_dependent(rms_norm_kernel<T, float>, dim3(rows), dim3(threads), 0, stream, p);
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
