#include <gtest/gtest.h>

#include "engine_test_support.h"
#include "strata/core/progress.h"
#include "strata/engine/startup_summary.h"
#include "strata/model/model_loader.h"

namespace strata {
namespace {

using test::fixture_path;

TEST(StartupSummary, FiguresComeFromTheWeightsPoolAndEngine) {
  test::EngineFixture f;
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 40});
  test::CheckedEngine engine(runner, *f.tokenizer, {}, {.max_model_len = 100});
  const std::vector<std::string> lines = startup_summary({.weights = f.loaded.weights.get(),
                                                          .runner = &runner,
                                                          .model_context_tokens = f.loaded.config.max_position_embeddings,
                                                          .max_model_len = engine.max_model_len()});
  ASSERT_EQ(lines.size(), 3u);  // no SSM line (no recurrent layers), no graph line (CPU)
  EXPECT_EQ(lines[0], "weights: 508992 parameters, 1.02 MB in memory, stored as bf16 (" + f.loaded.weights->description() + ")");
  EXPECT_EQ(f.loaded.weights->num_parameters(), 508992);
  // 100 tokens take 7 blocks: 40 / 7 = 5 sequences; 4096 take 256, more than the pool.
  EXPECT_EQ(lines[1], "KV cache (f32): 40 blocks of 16 tokens (640 tokens); 0 sequences fit at the model's full context "
                      "(4096 tokens), 5 at max_model_len 100");
  // The default 4 GiB would hold more than the pool: capped at its 40 blocks.
  EXPECT_EQ(lines[2], "swap space: " + format_bytes(40 * runner.kv_cache()->shape().bytes_per_block()) +
                          " of host memory for preempted sequences, 40 KV blocks");
}

// Rank 0 of 2 on qwen3 (tied, 512 tokens): the weights line names the rank, and the vocabulary line
// what rank 0 holds of the one table, 256 rows of 128 bf16 values, against the whole 512.
TEST(StartupSummary, UnderTensorParallelismRankZerosWeightsAndVocabularyShare) {
  auto backend = make_cpu_backend(1);
  LoadedModel loaded = load_model({.model_path = fixture_path("hf/qwen3"), .shard = {.rank = 0, .size = 2}}, *backend);
  ModelRunner runner(*loaded.model, *backend, {.num_kv_blocks = 16});
  const std::vector<std::string> lines = startup_summary({.weights = loaded.weights.get(), .runner = &runner});
  ASSERT_GE(lines.size(), 3u);
  EXPECT_TRUE(lines[0].starts_with("weights (rank 0 of 2): ")) << lines[0];
  EXPECT_EQ(lines[1], "vocabulary: 512 tokens padded to 512, 256 rows a rank of the tied embedding and LM head: " +
                          format_bytes(256 * 128 * 2) + " instead of " + format_bytes(512 * 128 * 2));
}

TEST(StartupSummary, HybridModelsListTheirSsmSlots) {
  auto backend = make_cpu_backend(2);
  LoadedModel loaded = load_model({.model_path = fixture_path("hf/qwen3_next")}, *backend);
  ModelRunner runner(*loaded.model, *backend, {.num_kv_blocks = 16, .num_ssm_slots = 6});
  const std::vector<std::string> lines = startup_summary({.weights = loaded.weights.get(),
                                                          .runner = &runner,
                                                          .model_context_tokens = loaded.config.max_position_embeddings,
                                                          .max_model_len = 32});
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1], "KV cache (f32): 16 blocks of 16 tokens (256 tokens); 0 sequences fit at the model's full context "
                      "(4096 tokens), 8 at max_model_len 32");
  EXPECT_EQ(runner.ssm_pool()->slot_bytes(), 58368);
  EXPECT_EQ(lines[2], "SSM state: 6 slots of 58.4 kB");
  EXPECT_EQ(lines[3], "swap space: none (preempted sequences recompute; --swap-space GiB to keep them)");
  const int64_t block_bytes = runner.kv_cache()->shape().bytes_per_block();
  runner.memory().start_swap_space((16 * block_bytes + 6 * 58368) / 2);  // half of the pools: 8 blocks, 3 slots
  const std::vector<std::string> swapping = startup_summary({.weights = loaded.weights.get(), .runner = &runner});
  EXPECT_EQ(swapping[3], "swap space: " + format_bytes(8 * block_bytes + 3 * 58368) +
                             " of host memory for preempted sequences, 8 KV blocks and 3 SSM slots");
}

TEST(StartupSummary, AnEagle3HeadNamesItsLayersAndDraftVocabulary) {
  auto backend = make_cpu_backend(2);
  LoadedModel target = load_model({.model_path = fixture_path("hf/llama")}, *backend);
  LoadedModel head = load_eagle3_head(fixture_path("hf/llama_eagle3"), *target.model, *backend);
  ModelRunner runner(*target.model, *backend, {.num_kv_blocks = 16});
  ModelRunner head_runner(*head.model, *backend, {.num_kv_blocks = 16});
  const std::vector<std::string> lines = startup_summary({.weights = target.weights.get(), .runner = &runner,
                                                          .draft_weights = head.weights.get(),
                                                          .draft_runner = &head_runner});
  EXPECT_EQ(lines.back(), "EAGLE-3 head: " + std::to_string(head.weights->num_parameters()) + " parameters, " +
                              format_bytes(head.weights->num_bytes()) +
                              " in memory, reading target layers 0, 1, 2, 256 draft tokens; its KV cache 16 blocks");
}

// Shared with an unsplit target, the module's weights are the target's; a split target's rank 0
// holds the module whole, and the line counts what that costs.
TEST(StartupSummary, AnMtpModuleSaysWhenRankZeroHoldsItWhole) {
  auto backend = make_cpu_backend(2);
  const LoadedModel target = load_model({.model_path = fixture_path("hf/qwen3_next_mtp")}, *backend);
  const LoadedModel shared = load_mtp_module(target);
  ModelRunner runner(*target.model, *backend, {.num_kv_blocks = 16});
  ModelRunner module_runner(*shared.model, *backend, {.num_kv_blocks = 16});
  const StartupFacts facts{.weights = target.weights.get(), .runner = &runner, .draft_runner = &module_runner};
  EXPECT_EQ(shared.weights, nullptr);
  EXPECT_EQ(startup_summary(facts).back(), "MTP module: 1 layers; its KV cache 16 blocks");
  const LoadedModel split = load_model({.model_path = fixture_path("hf/qwen3_next_mtp"), .shard = {.rank = 0, .size = 2}},
                                       *backend);
  const LoadedModel whole = load_mtp_module(split);
  StartupFacts split_facts = facts;
  split_facts.draft_weights = whole.weights.get();
  EXPECT_EQ(startup_summary(split_facts).back(),
            "MTP module: 1 layers, whole on rank 0 (" + std::to_string(whole.weights->num_parameters()) +
                " parameters, " + format_bytes(whole.weights->num_bytes()) + " in memory); its KV cache 16 blocks");
  EXPECT_GT(whole.weights->num_parameters(), 2 * 512 * 64) << "the embedding and LM head, whole";
}

}  // namespace
}  // namespace strata
