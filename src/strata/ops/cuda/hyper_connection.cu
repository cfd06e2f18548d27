// CUDA hyper-connection stream ops (ops/cpu/hyper_connection.cpp): repeat, collapse and expand.
// A block row of the grid is one token (grid-strided past 65535), its threads stride over hidden;
// activations bf16 or f32, weights f32, f32 math summed in the CPU's order.
#include <algorithm>

#include "strata/ops/cuda/activation_types.cuh"
#include "strata/ops/hyper_connection.h"

namespace strata::cuda {
namespace {

constexpr int kMax = static_cast<int>(ops::kCudaMaxHyperStreams);
constexpr int kThreads = 256;

template <typename T>
__global__ void hyper_repeat_kernel(const T* x, T* streams, int64_t n, int64_t hidden, int64_t total) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    streams[e] = x[(e / (n * hidden)) * hidden + e % hidden];
}

struct StreamMixParams {
  void* streams;          // [T, n, hidden]: read by collapse, updated in place by expand
  void* row;              // collapse: out [T, hidden]; expand: block_out [T, hidden]
  const float* weights;   // collapse: pre [T, n]; expand: post [T, n]
  const float* comb;      // expand: [T, n, n]
  int64_t tokens, hidden;
  int n;
};

template <typename T>
__global__ void hyper_collapse_kernel(StreamMixParams p) {
  for (int64_t t = blockIdx.y; t < p.tokens; t += gridDim.y) {
    const T* x = static_cast<const T*>(p.streams) + t * p.n * p.hidden;
    const float* pre = p.weights + t * p.n;
    T* out = static_cast<T*>(p.row) + t * p.hidden;
    for (int64_t d = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; d < p.hidden;
         d += static_cast<int64_t>(gridDim.x) * blockDim.x) {
      float sum = 0.f;
      for (int j = 0; j < p.n; ++j) sum += pre[j] * to_f32(x[j * p.hidden + d]);
      out[d] = from_f32<T>(sum);
    }
  }
}

// In place: each thread owns (t, d) in every stream and reads all n inputs into registers
// before writing any output, so no stream is overwritten while still to be read.
template <typename T>
__global__ void hyper_expand_kernel(StreamMixParams p) {
  for (int64_t t = blockIdx.y; t < p.tokens; t += gridDim.y) {
    T* x = static_cast<T*>(p.streams) + t * p.n * p.hidden;
    const T* y = static_cast<const T*>(p.row) + t * p.hidden;
    const float* post = p.weights + t * p.n;
    const float* comb = p.comb + t * p.n * p.n;
    for (int64_t d = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; d < p.hidden;
         d += static_cast<int64_t>(gridDim.x) * blockDim.x) {
      float in[kMax];
#pragma unroll
      for (int j = 0; j < kMax; ++j)
        if (j < p.n) in[j] = to_f32(x[j * p.hidden + d]);
      const float yd = to_f32(y[d]);
#pragma unroll
      for (int k = 0; k < kMax; ++k) {
        if (k >= p.n) break;
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < kMax; ++j)
          if (j < p.n) sum += comb[j * p.n + k] * in[j];
        x[k * p.hidden + d] = from_f32<T>(post[k] * yd + sum);
      }
    }
  }
}

// Blocks over hidden (x) and tokens (y, capped: the kernels stride over the rest).
dim3 token_grid(int64_t tokens, int64_t hidden) {
  return dim3(static_cast<unsigned>(ceil_div(hidden, kThreads)),
              static_cast<unsigned>(std::min<int64_t>(tokens, 65535)));
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

void hyper_collapse(const Tensor& streams, const Tensor& pre, const Tensor& out) {
  const StreamMixParams p{.streams = streams.data(), .row = out.data(), .weights = pre.data_as<float>(),
                          .comb = nullptr, .tokens = streams.dim(0), .hidden = streams.dim(2),
                          .n = static_cast<int>(streams.dim(1))};
  for_activation_type(streams.dtype(), "hyper_collapse", [&](auto type) {
    hyper_collapse_kernel<decltype(type)><<<token_grid(p.tokens, p.hidden), kThreads, 0, current_stream()>>>(p);
  });
}

void hyper_expand(const Tensor& streams, const Tensor& block_out, const Tensor& post, const Tensor& comb) {
  const StreamMixParams p{.streams = streams.data(), .row = block_out.data(), .weights = post.data_as<float>(),
                          .comb = comb.data_as<float>(), .tokens = streams.dim(0), .hidden = streams.dim(2),
                          .n = static_cast<int>(streams.dim(1))};
  for_activation_type(streams.dtype(), "hyper_expand", [&](auto type) {
    hyper_expand_kernel<decltype(type)><<<token_grid(p.tokens, p.hidden), kThreads, 0, current_stream()>>>(p);
  });
}

}  // namespace strata::cuda
