// DeepSeek-V4's configuration read from the fixture's config.json: the layer plan, the two
// rotary tables against transformers' inv_freq buffers (bf16-rounded, as the fixture's
// reference holds them), the cache-row layouts, and errors for configs it cannot take.
#include "strata/model/arch/deepseek_v4_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/core/error.h"
#include "strata/model/model_loader.h"
#include "test_support.h"

namespace strata {
namespace {

ModelConfig fixture_config() { return ModelConfig::from_file(test::fixture_path("hf/deepseek_v4/config.json")); }

TEST(DeepseekV4Config, ReadsTheFixturesLayerPlan) {
  const DeepseekV4Config c = DeepseekV4Config::read(fixture_config());
  ASSERT_EQ(c.layers.size(), 4u);
  EXPECT_EQ(c.layers[0].attention, DeepseekV4AttentionKind::kSliding);
  EXPECT_EQ(c.layers[1].attention, DeepseekV4AttentionKind::kCompressedSparse);
  EXPECT_EQ(c.layers[2].attention, DeepseekV4AttentionKind::kHeavilyCompressed);
  EXPECT_EQ(c.layers[3].attention, DeepseekV4AttentionKind::kCompressedSparse);
  EXPECT_EQ(c.layers[1].compress_rate, 4);
  EXPECT_EQ(c.layers[2].compress_rate, 16);
  EXPECT_EQ(c.layers[0].compress_rate, 0);
  EXPECT_TRUE(c.layers[1].hash_moe);
  EXPECT_FALSE(c.layers[2].hash_moe);
  EXPECT_EQ(c.rope_dim, 8);
  EXPECT_EQ(c.hc_mult, 3);
  EXPECT_EQ(c.index_topk, 3);
  EXPECT_FLOAT_EQ(c.swiglu_limit, 0.3f);
}

// transformers' DeepseekV4RotaryEmbedding buffers for the fixture, rounded to bf16: main is plain
// theta 10000; compress is theta 160000 with YaRN (factor 4, attention_factor 1).
TEST(DeepseekV4Config, RotaryTablesMatchTransformers) {
  const DeepseekV4Config c = DeepseekV4Config::read(fixture_config());
  const std::vector<float> main = {1.0f, 0.10009765625f, 0.010009765625f, 0.00099945068359375f};
  const std::vector<float> compress = {1.0f, 0.03125f, 0.0006256103515625f, 3.123283386230469e-05f};
  EXPECT_EQ(c.main_rope.inv_freq, main);
  EXPECT_EQ(c.compress_rope.inv_freq, compress);
  EXPECT_EQ(c.main_rope.rotary_dim, 8);
  EXPECT_FLOAT_EQ(c.compress_rope.attention_scaling, 1.0f);
}

TEST(DeepseekV4Config, RowLayoutsPerLayerKind) {
  const DeepseekV4Config c = DeepseekV4Config::read(fixture_config());
  EXPECT_EQ(c.row_layout(c.layers[0]).width, 32);
  const DeepseekV4RowLayout hca = c.row_layout(c.layers[2]);  // d 32, one series
  EXPECT_EQ(hca.compressor_kv, 32);
  EXPECT_EQ(hca.compressor_gate, 64);
  EXPECT_EQ(hca.entry, 96);
  EXPECT_EQ(hca.width, 128);
  const DeepseekV4RowLayout csa = c.row_layout(c.layers[1]);  // two series; indexer d 16
  EXPECT_EQ(csa.compressor_gate, 96);
  EXPECT_EQ(csa.entry, 160);
  EXPECT_EQ(csa.indexer_kv, 192);
  EXPECT_EQ(csa.indexer_gate, 224);
  EXPECT_EQ(csa.indexer_entry, 256);
  EXPECT_EQ(csa.width, 272);
  EXPECT_EQ(c.max_row_width(), 272);
}

void expect_refused(const std::string& key, const nlohmann::json& value, const std::string& message) {
  ModelConfig config = fixture_config();
  config.raw[key] = value;
  if (key == "num_key_value_heads") config.num_key_value_heads = value.get<int64_t>();
  try {
    DeepseekV4Config::read(config);
    FAIL() << key << ": no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(DeepseekV4Config, RefusesWhatItCannotTake) {
  expect_refused("layer_types", {"sliding_attention", "full_attention", "sliding_attention", "sliding_attention"},
                 "layer_types[1] is 'full_attention'");
  expect_refused("mlp_layer_types", {"moe", "moe"}, "must list all 4 layers");
  expect_refused("compress_rates", {{"compressed_sparse_attention", 0}, {"heavily_compressed_attention", 16}},
                 "compress_rates must give compressed_sparse_attention a rate");
  expect_refused("hc_mult", 0, "hc_mult is 0");
  expect_refused("o_groups", 3, "o_groups 3 must divide num_attention_heads 4");
  expect_refused("num_key_value_heads", 2, "one shared key-value head");
}

// `strata info` builds the model from shapes alone: the plan names each layer's attention kind
// (what its cache rows carry) and routing.
TEST(DeepseekV4Config, ShapesOnlyModelGivesTheLayerPlan) {
  const auto backend = make_cpu_backend(1);
  const LoadedModel loaded =
      load_model({.model_path = test::fixture_path("hf/deepseek_v4"), .shapes_only = true}, *backend);
  EXPECT_EQ(loaded.model->layer_plan(),
            (std::vector<std::string>{"sliding attention + hash moe",
                                      "compressed sparse attention (rate 4, indexer) + hash moe",
                                      "heavily compressed attention (rate 16) + moe",
                                      "compressed sparse attention (rate 4, indexer) + moe"}));
  EXPECT_EQ(loaded.model->kv_cache_head_dim(), 272);
}

}  // namespace
}  // namespace strata
