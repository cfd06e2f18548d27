// CUDA twins of Qwen4-Exp's gated hyper-connection ops (ops/cpu/gated_residual.cpp): the grouped
// RMS norm takes one block per group; the gated mean and the injection are grid-stride loops
// over output elements. Activations bf16 or f32, gate logits and weights f32, f32 math.
#include "strata/ops/cuda/activation_types.cuh"
#include "strata/ops/gated_residual.h"

namespace strata::cuda {
namespace {

struct StreamNormParams {
  const void* x;         // [rows, width], width = groups * group
  const float* weight;   // [width]
  void* out;             // [rows, width], may alias x
  int64_t group, width;
  float eps, offset;     // offset 1 for (1 + w) weights
};

template <typename T>
__global__ void stream_rms_norm_kernel(StreamNormParams p) {
  __shared__ float scratch[32];
  const int64_t g = blockIdx.x;
  const T* in = static_cast<const T*>(p.x) + g * p.group;
  T* dst = static_cast<T*>(p.out) + g * p.group;
  const float* w = p.weight + (g * p.group) % p.width;
  float sum = 0.f;
  for (int64_t i = threadIdx.x; i < p.group; i += blockDim.x) sum += to_f32(in[i]) * to_f32(in[i]);
  sum = block_sum(sum, scratch);
  const float inv = rsqrtf(sum / static_cast<float>(p.group) + p.eps);
  for (int64_t i = threadIdx.x; i < p.group; i += blockDim.x)
    dst[i] = from_f32<T>(to_f32(in[i]) * inv * (p.offset + w[i]));
}

struct StreamMixParams {
  const float* gate;  // [T, n, hidden] gate logits (mean) or [T, n] injection logits (inject)
  const void* src;    // mean: the normed streams [T, n, hidden]; inject: block_out [T, hidden]
  void* dst;          // mean: out [T, hidden]; inject: the streams [T, n, hidden]
  int64_t tokens, n, hidden;
};

template <typename T>
__global__ void gated_stream_mean_kernel(StreamMixParams p) {
  const T* x = static_cast<const T*>(p.src);
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < p.tokens * p.hidden;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = e / p.hidden, i = e % p.hidden;
    float acc = 0.f;
    for (int64_t j = 0; j < p.n; ++j) {
      const int64_t at = (t * p.n + j) * p.hidden + i;
      acc += to_f32(x[at]) / (1.0f + expf(-p.gate[at]));
    }
    static_cast<T*>(p.dst)[e] = from_f32<T>(acc / static_cast<float>(p.n));
  }
}

template <typename T>
__global__ void stream_inject_kernel(StreamMixParams p) {
  const T* y = static_cast<const T*>(p.src);
  T* s = static_cast<T*>(p.dst);
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < p.tokens * p.n * p.hidden;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = e / p.hidden, t = row / p.n, i = e % p.hidden;  // row = t * n + j
    const float scale = 2.0f / (1.0f + expf(-p.gate[row] / static_cast<float>(p.n)));
    s[e] = from_f32<T>(to_f32(s[e]) + scale * to_f32(y[t * p.hidden + i]));
  }
}

}  // namespace

void stream_rms_norm(const Tensor& x, const Tensor& weight, int64_t group, const ops::RmsNormParams& params,
                     const Tensor& out) {
  const StreamNormParams p{.x = x.data(), .weight = weight.data_as<float>(), .out = out.data(), .group = group,
                           .width = x.dim(1), .eps = params.eps, .offset = params.unit_offset ? 1.0f : 0.0f};
  const unsigned blocks = static_cast<unsigned>(x.numel() / group);
  const int threads = group >= 256 ? 256 : 128;
  for_activation_type(x.dtype(), "stream_rms_norm", [&](auto type) {
    stream_rms_norm_kernel<decltype(type)><<<blocks, threads, 0, current_stream()>>>(p);
  });
}

void gated_stream_mean(const Tensor& gate_logits, const Tensor& normed, const Tensor& out) {
  const StreamMixParams p{.gate = gate_logits.data_as<float>(), .src = normed.data(), .dst = out.data(),
                          .tokens = normed.dim(0), .n = normed.dim(1), .hidden = normed.dim(2)};
  const unsigned blocks = grid_for(out.numel(), 256);
  for_activation_type(out.dtype(), "gated_stream_mean", [&](auto type) {
    gated_stream_mean_kernel<decltype(type)><<<blocks, 256, 0, current_stream()>>>(p);
  });
}

void stream_inject(const Tensor& streams, const Tensor& block_out, const Tensor& logits) {
  const StreamMixParams p{.gate = logits.data_as<float>(), .src = block_out.data(), .dst = streams.data(),
                          .tokens = streams.dim(0), .n = streams.dim(1), .hidden = streams.dim(2)};
  const unsigned blocks = grid_for(streams.numel(), 256);
  for_activation_type(streams.dtype(), "stream_inject", [&](auto type) {
    stream_inject_kernel<decltype(type)><<<blocks, 256, 0, current_stream()>>>(p);
  });
}

}  // namespace strata::cuda
