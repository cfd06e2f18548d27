// Hyper-connections on the DeepSeek-V4 fixture's weights against transformers on fixed streams
// (parts_reference.safetensors): layer 0's attention mix (post, Sinkhorn comb, collapsed input),
// the expand it implies, and the hyper head's collapse.
#include "strata/model/layers/hyper_connection.h"

#include <gtest/gtest.h>

#include <vector>

#include "model/layers/deepseek_v4_parts_support.h"

namespace strata {
namespace {

constexpr int64_t kTokens = 4, kStreams = 3, kHidden = 64;

struct HyperFixture : test::DeepseekV4Parts {
  Workspace workspace{*backend}, step_workspace{*backend};
  ForwardContext ctx{.backend = *backend, .workspace = workspace, .step_workspace = step_workspace};
  HyperConnectionOptions options{.weights = {.num_streams = kStreams, .sinkhorn_iters = 20, .eps = 1e-6f},
                                 .hidden_size = kHidden, .rms_norm_eps = 1e-6f};

  Tensor expected(const std::string& name) const { return reference_tensor(name); }
  // A writable copy of the reference streams as [T, n * hidden].
  Tensor streams() const {
    Tensor t = Tensor::host(DType::kF32, {kTokens, kStreams * kHidden});
    std::copy_n(expected("hc_streams").data_as<float>(), t.numel(), t.data_as<float>());
    return t;
  }
};

void expect_near(const Tensor& got, const Tensor& want, double tolerance) {
  ASSERT_EQ(got.numel(), want.numel());
  for (int64_t i = 0; i < got.numel(); ++i) EXPECT_NEAR(got.data_as<float>()[i], want.data_as<float>()[i], tolerance) << i;
}

TEST(DeepseekV4HyperConnection, MixAndCollapseMatchTransformers) {
  HyperFixture f;
  const HyperConnection hc(f.options, WeightScope(*f.weights, "model.layers.0"), "hc_attn");
  Tensor streams = f.streams(), collapsed = Tensor::host(DType::kF32, {kTokens, kHidden});
  const HyperConnection::Mix mix = hc.collapse(streams, collapsed, f.ctx);
  expect_near(mix.post, f.expected("hc_post"), 1e-5);
  expect_near(mix.comb, f.expected("hc_comb"), 1e-5);
  expect_near(collapsed, f.expected("hc_collapsed"), 1e-5);
  // Expanding the collapsed input back: stream k = post[k] * y + sum_j comb[j, k] * stream j.
  const Tensor before = f.streams();
  hc.expand(streams, collapsed, mix);
  const float* p = mix.post.data_as<float>();
  const float* c = mix.comb.data_as<float>();
  for (int64_t t = 0; t < kTokens; ++t)
    for (int64_t k = 0; k < kStreams; ++k)
      for (int64_t d = 0; d < kHidden; d += 7) {
        double want = p[t * kStreams + k] * collapsed.data_as<float>()[t * kHidden + d];
        for (int64_t j = 0; j < kStreams; ++j)
          want += c[(t * kStreams + j) * kStreams + k] * before.data_as<float>()[(t * kStreams + j) * kHidden + d];
        EXPECT_NEAR(streams.data_as<float>()[(t * kStreams + k) * kHidden + d], want, 1e-5);
      }
}

TEST(DeepseekV4HyperConnection, HyperHeadCollapseMatchesTransformers) {
  HyperFixture f;
  const HyperHead head(f.options, WeightScope(*f.weights, "model.hc_head"));
  Tensor out = Tensor::host(DType::kF32, {kTokens, kHidden});
  head.collapse(f.streams(), out, f.ctx);
  expect_near(out, f.expected("head_collapsed"), 1e-5);
}

}  // namespace
}  // namespace strata
