// MoeFfn on the DeepSeek-V4 fixture's weights against transformers' DeepseekV4SparseMoeBlock on
// fixed inputs (parts_reference.safetensors): hash routing by tid2eid (layer 1) and sqrt-softplus
// scores with a correction bias (layer 2), the swiglu_limit clamp on experts and shared expert.
#include "strata/model/layers/moe.h"

#include <gtest/gtest.h>

#include "model/layers/deepseek_v4_parts_support.h"
#include "strata/model/layers/normed_input.h"

namespace strata {
namespace {

void expect_layer_matches(int layer) {
  const test::DeepseekV4Parts parts;
  Backend& backend = *parts.backend;
  const MoeFfn moe = test::deepseek_v4_fixture_moe(*parts.weights, layer);

  auto tensor = [&](const std::string& name) { return parts.reference_tensor(name); };
  Workspace workspace(backend), step_workspace(backend);
  ForwardContext ctx{.backend = backend, .workspace = workspace, .step_workspace = step_workspace};
  ctx.token_ids = tensor("moe_token_ids");
  const Tensor x = tensor("moe_input"), expected = tensor("moe_out_" + std::to_string(layer));
  Tensor out = Tensor::host(DType::kF32, x.shape());
  NormedInput in = NormedInput::normalized(x);
  moe.forward(in, out, ctx, SublayerWrite::kStore);
  for (int64_t i = 0; i < out.numel(); ++i)
    EXPECT_NEAR(out.data_as<float>()[i], expected.data_as<float>()[i], 1e-5) << layer << ": " << i;
}

TEST(DeepseekV4Moe, HashRoutedLayerMatchesTransformers) { expect_layer_matches(1); }

TEST(DeepseekV4Moe, SqrtSoftplusRoutedLayerMatchesTransformers) { expect_layer_matches(2); }

}  // namespace
}  // namespace strata
