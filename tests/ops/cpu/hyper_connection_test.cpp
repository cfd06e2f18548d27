// Hyper-connection weights and stream mixing against double references of transformers'
// DeepseekV4HyperConnection / DeepseekV4HyperHead / DeepseekV4DecoderLayer arithmetic.
#include "strata/ops/hyper_connection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "strata/core/error.h"
#include "test_support.h"

namespace strata {
namespace {

constexpr int64_t kStreams = 3, kTokens = 5, kHidden = 7;

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

const float* f(const Tensor& t) { return t.data_as<float>(); }

TEST(HyperConnectionOp, WeightsMatchSigmoidSoftmaxAndSinkhorn) {
  const int64_t n = kStreams, width = (2 + n) * n;
  const Tensor mixes = test::random_f32({kTokens, width}, 61), base = test::random_f32({width}, 62);
  const Tensor scale = test::random_f32({3}, 63);
  Tensor pre = Tensor::host(DType::kF32, {kTokens, n}), post = Tensor::host(DType::kF32, {kTokens, n});
  Tensor comb = Tensor::host(DType::kF32, {kTokens, n, n});
  const ops::HyperWeightsOptions options{.num_streams = n, .sinkhorn_iters = 20, .eps = 1e-6f};
  ops::hyper_connection_weights(mixes, base, scale, options, pre, post, comb);
  for (int64_t t = 0; t < kTokens; ++t) {
    const float* w = f(mixes) + t * width;
    for (int64_t j = 0; j < n; ++j) {
      EXPECT_NEAR(f(pre)[t * n + j], sigmoid(w[j] * f(scale)[0] + f(base)[j]) + 1e-6, 1e-6);
      EXPECT_NEAR(f(post)[t * n + j], 2 * sigmoid(w[n + j] * f(scale)[1] + f(base)[n + j]), 1e-6);
    }
    std::vector<double> c(n * n);
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += c[j * n + k] = std::exp(w[2 * n + j * n + k] * f(scale)[2] + f(base)[2 * n + j * n + k]);
      for (int64_t k = 0; k < n; ++k) c[j * n + k] = c[j * n + k] / sum + 1e-6;
    }
    auto normalise = [&](bool rows) {
      for (int64_t a = 0; a < n; ++a) {
        double sum = 0;
        for (int64_t b = 0; b < n; ++b) sum += rows ? c[a * n + b] : c[b * n + a];
        for (int64_t b = 0; b < n; ++b) (rows ? c[a * n + b] : c[b * n + a]) /= sum + 1e-6;
      }
    };
    normalise(false);
    for (int it = 1; it < 20; ++it) {
      normalise(true);
      normalise(false);
    }
    double col_sum = 0;
    for (int64_t j = 0; j < n; ++j) col_sum += f(comb)[t * n * n + j * n + 1];
    EXPECT_NEAR(col_sum, 1.0, 1e-5);  // doubly stochastic
    for (int64_t i = 0; i < n * n; ++i) EXPECT_NEAR(f(comb)[t * n * n + i], c[i], 1e-5) << t << "," << i;
  }
}

TEST(HyperConnectionOp, HeadWeightsAreSigmoidPlusEps) {
  const Tensor mixes = test::random_f32({kTokens, kStreams}, 64), base = test::random_f32({kStreams}, 65);
  const Tensor scale = test::random_f32({1}, 66);
  Tensor pre = Tensor::host(DType::kF32, {kTokens, kStreams});
  ops::hyper_head_weights(mixes, base, scale, 1e-3f, pre);
  for (int64_t i = 0; i < kTokens * kStreams; ++i)
    EXPECT_NEAR(f(pre)[i], sigmoid(f(mixes)[i] * f(scale)[0] + f(base)[i % kStreams]) + 1e-3, 1e-6);
}

TEST(HyperConnectionOp, CollapseAndExpandMixStreams) {
  const int64_t n = kStreams;
  Tensor streams = test::random_f32({kTokens, n, kHidden}, 67);
  const Tensor before = test::random_f32({kTokens, n, kHidden}, 68);
  std::copy(f(streams), f(streams) + streams.numel(), before.data_as<float>());
  const Tensor pre = test::random_f32({kTokens, n}, 69), post = test::random_f32({kTokens, n}, 70);
  const Tensor comb = test::random_f32({kTokens, n, n}, 71), block_out = test::random_f32({kTokens, kHidden}, 72);
  Tensor collapsed = Tensor::host(DType::kF32, {kTokens, kHidden});
  ops::hyper_collapse(streams, pre, collapsed);
  ops::hyper_expand(streams, block_out, post, comb);
  for (int64_t t = 0; t < kTokens; ++t)
    for (int64_t d = 0; d < kHidden; ++d) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += f(pre)[t * n + j] * f(before)[(t * n + j) * kHidden + d];
      EXPECT_NEAR(f(collapsed)[t * kHidden + d], sum, 1e-5);
      for (int64_t k = 0; k < n; ++k) {
        double mixed = f(post)[t * n + k] * f(block_out)[t * kHidden + d];
        for (int64_t j = 0; j < n; ++j) mixed += f(comb)[(t * n + j) * n + k] * f(before)[(t * n + j) * kHidden + d];
        EXPECT_NEAR(f(streams)[(t * n + k) * kHidden + d], mixed, 1e-5) << t << "," << k << "," << d;
      }
    }
}

TEST(HyperConnectionOp, RepeatCopiesTheRowIntoEveryStream) {
  const Tensor x = test::random_f32({kTokens, kHidden}, 73);
  Tensor streams = Tensor::host(DType::kF32, {kTokens, kStreams, kHidden});
  ops::hyper_repeat(x, streams);
  for (int64_t t = 0; t < kTokens; ++t)
    for (int64_t j = 0; j < kStreams; ++j)
      for (int64_t d = 0; d < kHidden; ++d)
        EXPECT_EQ(f(streams)[(t * kStreams + j) * kHidden + d], f(x)[t * kHidden + d]);
}

// At least one stream everywhere; on CUDA at most kCudaMaxHyperStreams, refused at build naming
// the layer and the way out.
TEST(HyperConnectionOp, StreamCountIsCheckedAtBuild) {
  const Device cuda{.type = DeviceType::kCuda};
  EXPECT_NO_THROW(ops::check_hyper_connection_supported(Device{}, 3, "layer 0"));
  EXPECT_NO_THROW(ops::check_hyper_connection_supported(Device{}, ops::kCudaMaxHyperStreams + 1, "layer 0"));
  EXPECT_NO_THROW(ops::check_hyper_connection_supported(cuda, 4, "layer 0"));
  EXPECT_NO_THROW(ops::check_hyper_connection_supported(cuda, ops::kCudaMaxHyperStreams, "layer 0"));
  EXPECT_THROW(ops::check_hyper_connection_supported(Device{}, 0, "layer 0"), Error);
  try {
    ops::check_hyper_connection_supported(cuda, ops::kCudaMaxHyperStreams + 1, "layer 3");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string named = "layer 3: " + std::to_string(ops::kCudaMaxHyperStreams + 1) + " hyper-connection";
    EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--device cpu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
