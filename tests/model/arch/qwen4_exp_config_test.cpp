// Qwen4-Exp's configuration read from the fixture's config.json: the layer kinds, the PLE hash
// tables derived from seed and ngram_vocab_size_base (equal to the buffers transformers saved),
// errors for configs it cannot take, the layer plan `strata info` prints with the state each
// layer carries, and the refused fp8 KV cache.
#include "strata/model/arch/qwen4_exp_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/core/error.h"
#include "strata/engine/model_runner.h"
#include "strata/model/model_loader.h"
#include "test_support.h"

namespace strata {
namespace {

ModelConfig fixture_config() { return ModelConfig::from_file(test::fixture_path("hf/qwen4_exp/config.json")); }

TEST(Qwen4ExpConfig, ReadsTheFixturesLayersAndHashTables) {
  const Qwen4ExpConfig c = Qwen4ExpConfig::read(fixture_config());
  EXPECT_EQ(c.full_attention, (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(c.ple_index, (std::vector<int64_t>{0, -1, 1, -1}));
  EXPECT_EQ(c.hc_count, 3);
  EXPECT_EQ(c.hc_lowrank, 16);
  EXPECT_EQ(c.qsa.budget / c.qsa.compress_ratio, 2);
  ASSERT_EQ(c.ple_layers.size(), 2u);
  // transformers' layer_multipliers, ngram_heads_vocab_sizes and ngram_heads_offsets buffers.
  EXPECT_EQ(c.ple_layers[0].hash.multipliers,
            (std::vector<int64_t>{4295158889763781, 17440218147737327, 1270917961434445}));
  EXPECT_EQ(c.ple_layers[0].hash.vocab_sizes, (std::vector<int64_t>{67, 71, 73, 79}));
  EXPECT_EQ(c.ple_layers[0].hash.offsets, (std::vector<int64_t>{0, 67, 138, 211}));
  EXPECT_EQ(c.ple_layers[0].table_rows, 304);
  EXPECT_EQ(c.ple_layers[1].hash.multipliers,
            (std::vector<int64_t>{17237745666423273, 2619768721783435, 15090836525362811}));
  EXPECT_EQ(c.ple_layers[1].hash.vocab_sizes, (std::vector<int64_t>{83, 89, 97, 101}));
  EXPECT_EQ(c.ple_layers[1].hash.offsets, (std::vector<int64_t>{0, 83, 172, 269}));
  EXPECT_EQ(c.ple_layers[1].table_rows, 384);
}

void expect_refused(const std::string& key, const nlohmann::json& value, const std::string& message) {
  ModelConfig config = fixture_config();
  config.raw[key] = value;
  try {
    Qwen4ExpConfig::read(config);
    FAIL() << key << ": no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(Qwen4ExpConfig, RefusesWhatItCannotTake) {
  expect_refused("ple_layer_ids", {2}, "ple_layer_ids entry 2 must name a linear_attention layer");
  expect_refused("hc_count", 1, "hc_count is 1");
  expect_refused("indexer_budget", 6, "indexer_budget 6 must be a multiple of indexer_compress_ratio 4");
  expect_refused("indexer_head_dim", 64, "indexer_head_dim 64 exceeds head_dim 32");
  expect_refused("indexer_n_heads", nullptr, "without QSA");
  expect_refused("output_gate_type", "gelu", "output_gate_type 'gelu'");
  expect_refused("ple_embed_dim", 30, "ple_embed_dim 30 must split evenly");
  expect_refused("layer_types", {"linear_attention", "sliding_attention", "linear_attention", "indexed_attention"},
                 "layer_types entry 'sliding_attention'");
}

// `strata info` builds the model from shapes alone: the plan names what each layer carries; the
// SSM pool holds each DeltaNet's state and, after it, its PLE carry; the KV cache has one head
// more than the attention's, for the QSA index rows.
TEST(Qwen4ExpConfig, ShapesOnlyModelGivesTheLayerPlanAndItsStates) {
  const auto backend = make_cpu_backend(1);
  const LoadedModel loaded =
      load_model({.model_path = test::fixture_path("hf/qwen4_exp"), .shapes_only = true}, *backend);
  const std::string qsa = "hc3 qsa attention (blocks of 4, budget 8; KV + index rows) + moe";
  const std::string ple = "hc3 ple (n-gram + conv carry) + gated_deltanet (ssm state) + moe";
  EXPECT_EQ(loaded.model->layer_plan(), (std::vector<std::string>{ple, qsa, ple, qsa}));
  EXPECT_EQ(loaded.model->kv_cache_heads(), 3);
  const std::vector<SsmLayerShape>& states = loaded.model->ssm_layer_shapes();
  ASSERT_EQ(states.size(), 4u);
  EXPECT_EQ(states[0].h_state_elems, 4 * 32 * 32);          // DeltaNet: value heads x k x v
  EXPECT_EQ(states[1].h_state_elems, 4);                    // PLE: two tokens, two halves each
  EXPECT_EQ(states[1].conv_state_elems, 3 * 64 * (3 * 3));  // PLE: (kernel - 1) * dilation rows of n * hidden
  EXPECT_EQ(states[2].h_state_elems, states[0].h_state_elems);
  EXPECT_EQ(states[3].conv_state_elems, states[1].conv_state_elems);
}

// The QSA keys live in f32 cache rows: an fp8 KV cache is refused before any step runs.
TEST(Qwen4ExpConfig, AnFp8KvCacheIsRefused) {
  const auto backend = make_cpu_backend(1);
  const LoadedModel loaded = load_model({.model_path = test::fixture_path("hf/qwen4_exp")}, *backend);
  try {
    ModelRunner runner(*loaded.model, *backend, {.kv_cache_dtype = KvCacheDType::kFp8});
    FAIL() << "an fp8 KV cache was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("drop --kv-cache-dtype fp8"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
