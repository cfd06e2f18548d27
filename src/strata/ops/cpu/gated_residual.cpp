// Qwen4-Exp's gated hyper-connection ops in f32, as transformers' Qwen4ExpTextGatedResidual
// computes them (grouped Qwen4ExpTextRMSNorm, the gated mean, the injection).
#include <cmath>

#include "strata/core/parallel.h"
#include "strata/ops/gated_residual.h"

namespace strata::cpu {

void stream_rms_norm(const Tensor& x, const Tensor& weight, int64_t group, const ops::RmsNormParams& params,
                     const Tensor& out) {
  const int64_t width = x.dim(1), num_groups = x.dim(0) * (width / group);
  const float* src = x.data_as<float>();
  const float* w = weight.data_as<float>();
  float* dst = out.data_as<float>();
  const float offset = params.unit_offset ? 1.0f : 0.0f;
  parallel_for(num_groups, 64, [&](int64_t begin, int64_t end) {
   for (int64_t g = begin; g < end; ++g) {
    const float* in = src + g * group;
    float sum = 0.f;
    for (int64_t i = 0; i < group; ++i) sum += in[i] * in[i];
    const float inv = 1.0f / std::sqrt(sum / static_cast<float>(group) + params.eps);
    const float* wg = w + (g * group) % width;
    for (int64_t i = 0; i < group; ++i) dst[g * group + i] = in[i] * inv * (offset + wg[i]);
   }
  });
}

void gated_stream_mean(const Tensor& gate_logits, const Tensor& normed, const Tensor& out) {
  const int64_t t = normed.dim(0), n = normed.dim(1), hidden = normed.dim(2);
  const float* gate = gate_logits.data_as<float>();
  const float* x = normed.data_as<float>();
  float* dst = out.data_as<float>();
  parallel_for(t, 16, [&](int64_t begin, int64_t end) {
   for (int64_t row = begin; row < end; ++row) {
    float* o = dst + row * hidden;
    for (int64_t i = 0; i < hidden; ++i) o[i] = 0.f;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t base = (row * n + j) * hidden;
      for (int64_t i = 0; i < hidden; ++i) o[i] += x[base + i] / (1.0f + std::exp(-gate[base + i]));
    }
    for (int64_t i = 0; i < hidden; ++i) o[i] /= static_cast<float>(n);
   }
  });
}

void stream_inject(const Tensor& streams, const Tensor& block_out, const Tensor& logits) {
  const int64_t t = streams.dim(0), n = streams.dim(1), hidden = streams.dim(2);
  float* s = streams.data_as<float>();
  const float* y = block_out.data_as<float>();
  const float* w = logits.data_as<float>();
  parallel_for(t, 16, [&](int64_t begin, int64_t end) {
   for (int64_t row = begin; row < end; ++row) {
    for (int64_t j = 0; j < n; ++j) {
      float* dst = s + (row * n + j) * hidden;
      const float scale = 2.0f / (1.0f + std::exp(-w[row * n + j] / static_cast<float>(n)));
      for (int64_t i = 0; i < hidden; ++i) dst[i] += scale * y[row * hidden + i];
    }
   }
  });
}

}  // namespace strata::cpu
