// CUDA segment mean: block (r, c) owns 256 columns of segment r; each thread sums its column over
// the segment's rows in f32 and writes the mean back to every row.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/segment_mean.h"

namespace strata::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void segment_mean_kernel(const T* x, const int32_t* cu_seqlens, T* out, int64_t d) {
  const int64_t j = blockIdx.y * static_cast<int64_t>(kThreads) + threadIdx.x;
  if (j >= d) return;
  const int begin = cu_seqlens[blockIdx.x], end = cu_seqlens[blockIdx.x + 1];
  float sum = 0.0f;
  for (int t = begin; t < end; ++t) sum += to_f32(x[t * d + j]);
  const T mean = from_f32<T>(end > begin ? sum / static_cast<float>(end - begin) : 0.0f);
  for (int t = begin; t < end; ++t) out[t * d + j] = mean;
}

}  // namespace

void segment_mean(const Tensor& x, const Tensor& cu_seqlens, const Tensor& out) {
  const int64_t num_segments = cu_seqlens.dim(0) - 1, d = x.dim(1);
  if (num_segments == 0 || x.numel() == 0) return;
  const dim3 grid(static_cast<unsigned>(num_segments), static_cast<unsigned>((d + kThreads - 1) / kThreads));
  const cudaStream_t stream = current_stream();
  if (x.dtype() == DType::kBF16) {
    segment_mean_kernel<<<grid, kThreads, 0, stream>>>(x.data_as<__nv_bfloat16>(), cu_seqlens.data_as<int32_t>(),
                                                       out.data_as<__nv_bfloat16>(), d);
  } else if (x.dtype() == DType::kF32) {
    segment_mean_kernel<<<grid, kThreads, 0, stream>>>(x.data_as<float>(), cu_seqlens.data_as<int32_t>(),
                                                       out.data_as<float>(), d);
  } else {
    unsupported_dtype("segment_mean", x.dtype());
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
