// Qwen4-Exp's gated hyper-connection ops against double references of transformers'
// Qwen4ExpTextGatedResidual arithmetic (grouped (1 + w) RMS norm, gated stream mean, injection).
#include "strata/ops/gated_residual.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_support.h"

namespace strata {
namespace {

constexpr int64_t kStreams = 3, kTokens = 4, kHidden = 8;

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }
const float* f(const Tensor& t) { return t.data_as<float>(); }

TEST(GatedResidualOp, StreamRmsNormNormsEachStreamWithItsWeights) {
  const int64_t width = kStreams * kHidden;
  const Tensor x = test::random_f32({kTokens, width}, 71, -2.f, 2.f), w = test::random_f32({width}, 72);
  Tensor out = Tensor::host(DType::kF32, {kTokens, width});
  ops::stream_rms_norm(x, w, kHidden, {.eps = 1e-6f, .unit_offset = true}, out);
  for (int64_t t = 0; t < kTokens; ++t)
    for (int64_t j = 0; j < kStreams; ++j) {
      const float* in = f(x) + t * width + j * kHidden;
      double sum = 0;
      for (int64_t i = 0; i < kHidden; ++i) sum += in[i] * in[i];
      const double inv = 1.0 / std::sqrt(sum / kHidden + 1e-6);
      for (int64_t i = 0; i < kHidden; ++i)
        EXPECT_NEAR(f(out)[t * width + j * kHidden + i], in[i] * inv * (1.0 + f(w)[j * kHidden + i]), 1e-5);
    }
}

TEST(GatedResidualOp, GatedStreamMeanAndInjection) {
  const Tensor gate = test::random_f32({kTokens, kStreams, kHidden}, 73, -3.f, 3.f);
  const Tensor normed = test::random_f32({kTokens, kStreams, kHidden}, 74);
  Tensor mixed = Tensor::host(DType::kF32, {kTokens, kHidden});
  ops::gated_stream_mean(gate, normed, mixed);
  const Tensor streams = test::random_f32({kTokens, kStreams, kHidden}, 75);
  Tensor updated = test::random_f32({kTokens, kStreams, kHidden}, 75);
  const Tensor logits = test::random_f32({kTokens, kStreams}, 76, -4.f, 4.f);
  ops::stream_inject(updated, mixed, logits);
  for (int64_t t = 0; t < kTokens; ++t)
    for (int64_t i = 0; i < kHidden; ++i) {
      double mean = 0;
      for (int64_t j = 0; j < kStreams; ++j) {
        const int64_t at = (t * kStreams + j) * kHidden + i;
        mean += sigmoid(f(gate)[at]) * f(normed)[at] / kStreams;
      }
      EXPECT_NEAR(f(mixed)[t * kHidden + i], mean, 1e-6);
      for (int64_t j = 0; j < kStreams; ++j) {
        const int64_t at = (t * kStreams + j) * kHidden + i;
        const double weight = 2 * sigmoid(f(logits)[t * kStreams + j] / kStreams);
        EXPECT_NEAR(f(updated)[at], f(streams)[at] + weight * mean, 1e-5);
      }
    }
}

}  // namespace
}  // namespace strata
