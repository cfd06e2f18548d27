// CUDA hyper-connection ops: only the repeat of the embedding into every stream so far (Qwen4-Exp's
// gated streams use it; DeepSeek-V4's mHC weights and mixes are CPU only, refused on CUDA at build).
#include "strata/ops/cuda/activation_types.cuh"
#include "strata/ops/hyper_connection.h"

namespace strata::cuda {
namespace {

template <typename T>
__global__ void hyper_repeat_kernel(const T* x, T* streams, int64_t n, int64_t hidden, int64_t total) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    streams[e] = x[(e / (n * hidden)) * hidden + e % hidden];
}

}  // namespace

void hyper_repeat(const Tensor& x, const Tensor& streams) {
  const int64_t n = streams.dim(1), hidden = streams.dim(2), total = streams.numel();
  const unsigned blocks = grid_for(total, 256);
  for_activation_type(x.dtype(), "hyper_repeat", [&](auto type) {
    using T = decltype(type);
    hyper_repeat_kernel<<<blocks, 256, 0, current_stream()>>>(x.data_as<T>(), streams.data_as<T>(), n, hidden, total);
  });
}

}  // namespace strata::cuda
