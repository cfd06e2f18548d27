// DeepSeek-V4 attention on the fixture's weights against transformers (parts_reference.safetensors:
// each layer's attention input and output over prompt 0, 40 tokens, in one forward): a sliding
// layer, CSA (indexer, overlapping windows) and HCA; the prompt whole, and in two chunks whose
// boundary cuts a CSA window and the HCA block, reading the first chunk's rows from the cache.
#include "strata/model/layers/deepseek_v4_attention.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/layers/deepseek_v4_parts_support.h"
#include "strata/cache/kv_cache.h"
#include "strata/model/layers/normed_input.h"
#include "test_support.h"

namespace strata {
namespace {

constexpr int64_t kPrompt = 40, kHidden = 64, kBlock = 16;

struct AttentionFixture : test::DeepseekV4Parts {
  ModelConfig model_config = ModelConfig::from_file(test::fixture_path("hf/deepseek_v4/config.json"));
  DeepseekV4Config config = DeepseekV4Config::read(model_config);

  // The layer's output over the prompt fed in pieces of `chunks` tokens: [kPrompt, hidden].
  Tensor run(int layer, const std::vector<int32_t>& chunks) {
    const DeepseekV4Attention attention(
        config, {.hidden_size = kHidden, .num_heads = 4, .rms_norm_eps = 1e-6f, .layer = config.layers[layer]},
        WeightScope(*weights, "model.layers." + std::to_string(layer) + ".attn"));
    KvCache cache({.num_layers = 1, .num_blocks = 6, .block_size = kBlock, .num_kv_heads = 1,
                   .head_dim = config.max_row_width(), .dtype = DType::kF32}, *backend);
    const Tensor input = reference_tensor("attn_in_" + std::to_string(layer));
    Tensor out = Tensor::host(DType::kF32, {kPrompt, kHidden});
    int32_t done = 0;
    for (int32_t n : chunks) {
      StepRow row{.seq_id = 1, .token_ids = std::vector<int32_t>(n, 7), .num_computed_tokens = done,
                  .block_table = {4, 1, 3}, .logits = LogitsMode::kNone};
      StepBatch step({row}, kBlock);
      step.upload(*backend);
      Workspace workspace(*backend), step_workspace(*backend);
      ForwardContext ctx{.backend = *backend, .workspace = workspace, .step_workspace = step_workspace,
                         .kv_cache = &cache, .kv_layer = 0};
      NormedInput in = NormedInput::normalized(input.slice_rows(done, done + n));
      attention.forward(step, in, out.slice_rows(done, done + n), ctx, SublayerWrite::kStore);
      done += n;
    }
    return out;
  }
};

void expect_matches(int layer) {
  AttentionFixture f;
  const Tensor expected = f.reference_tensor("attn_out_" + std::to_string(layer));
  for (const std::vector<int32_t>& chunks : {std::vector<int32_t>{kPrompt}, std::vector<int32_t>{18, 22}}) {
    const Tensor got = f.run(layer, chunks);
    double worst = 0;
    for (int64_t i = 0; i < got.numel(); ++i)
      worst = std::max(worst, std::abs(static_cast<double>(got.data_as<float>()[i]) - expected.data_as<float>()[i]));
    EXPECT_LT(worst, 1e-4) << "layer " << layer << ", " << chunks.size() << " chunk(s)";
  }
}

TEST(DeepseekV4Attention, SlidingLayerMatchesTransformers) { expect_matches(0); }
TEST(DeepseekV4Attention, CompressedSparseLayerMatchesTransformers) { expect_matches(1); }
TEST(DeepseekV4Attention, HeavilyCompressedLayerMatchesTransformers) { expect_matches(2); }

}  // namespace
}  // namespace strata
