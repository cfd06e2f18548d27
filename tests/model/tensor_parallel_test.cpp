// Tensor parallelism on the CPU: the fixtures split over 2 and 4 ranks (threads of this process,
// each with its own backend and the shared-memory communicator) give the logits of one rank, for
// prefill, chunked prefill and decode, with the vocabulary split too (padded where it does not
// divide); MoE fixtures split every expert's intermediate columns (the default) and, with
// expert_parallel, their experts by range; hybrid
// fixtures split Gated DeltaNet's key and value heads and Mamba-2's heads and groups, each rank's
// SSM state holding its heads; DeepSeek-V3's latent attention splits its heads; Qwen4-Exp keeps its
// streams whole and splits its QSA attention's heads; DeepSeek-V4 splits its query heads by whole
// output groups. What cannot split (ModernBERT's fused projections, a rank count that does not
// divide DeepSeek-V4's o_groups) is refused when the model is built.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "model/fixture_support.h"
#include "parallel/rank_threads_support.h"
#include "strata/core/error.h"
#include "strata/engine/rank_worker.h"
#include "strata/parallel/communicator.h"
#include "strata/parallel/step_message.h"
#include "strata/weights/safetensors_source.h"
#include "strata/weights/safetensors_writer.h"
#include "test_support.h"

namespace strata::test {
namespace {

// How MoE layers split (models without experts ignore it): every expert's columns, whole experts
// by range with every token on every rank, or by range with the tokens dispatched (all-to-all).
struct ExpertMode {
  bool expert_parallel = false;
  bool dispatch = false;
  std::string name() const { return expert_parallel ? (dispatch ? "-a2a" : "-ep") : ""; }
};
const ExpertMode kExpertModes[] = {{}, {.expert_parallel = true}, {.expert_parallel = true, .dispatch = true}};

std::string group_name(int world, const ExpertMode& mode) {
  return fmt::format("strata-test-tp-{}-{}", getpid(), per_test_name(fmt::format("{}{}", world, mode.name())));
}

// Rank r of `world` loads its part of the model; rank 0 runs `run` and keeps its logits. One
// sequence on fresh runners: the other ranks' SSM pools start zeroed, so the slot rank 0 hands out
// holds zeros there too without any slot operation mirrored.
Tensor run_split(const LoadOptions& model, int world, const SplitRun& run, const ExpertMode& mode = {}) {
  Tensor logits;
  const std::string group = group_name(world, mode);
  run_rank_threads(world, [&](int rank) {
    std::unique_ptr<Communicator> comm = make_shared_memory_communicator(
        {.rank = rank, .world_size = world, .group_name = group, .timeout = std::chrono::seconds(60)});
    std::unique_ptr<Backend> backend = make_cpu_backend(1);
    LoadOptions options = model;
    options.shard = {.rank = rank, .size = world, .expert_parallel = mode.expert_parallel,
                     .dispatch_tokens = mode.dispatch};
    LoadedModel loaded = load_model(options, *backend);
    ModelRunner runner(*loaded.model, *backend, {.num_kv_blocks = 64, .tensor_parallel = comm.get()});
    if (rank > 0) return serve_first_rank(runner, *comm);
    logits = run_sequence(runner, run.tokens, run.prefill, run.chunk);
    send_to_ranks(*comm, {.kind = RankMessage::Kind::kStop});
  });
  return logits;
}

// Rank counts that divide every split dimension of the fixture: Gated DeltaNet's 2 key heads
// (qwen3_next, qwen3_5_moe_text, qwen4_exp) and DeepSeek-V4's 2 o_groups stop at 2.
std::vector<int> split_sizes(const std::string& fixture) {
  if (fixture == "qwen3_next" || fixture == "qwen3_5_moe_text" || fixture == "qwen4_exp" || fixture == "deepseek_v4")
    return {2};
  return {2, 4};
}

bool has_moe_layers(const Model& model) {
  for (const std::string& layer : model.layer_plan())
    if (layer.find("moe") != std::string::npos) return true;
  return false;
}

// Chunked prefill of 20 tokens, then decode.
SplitRun dummy_run() {
  SplitRun run{.prefill = 20, .chunk = 6};
  for (int32_t i = 0; i < 28; ++i) run.tokens.push_back((i * 37 + 11) % 200);
  return run;
}

void expect_split_equals_one(const LoadOptions& model, const SplitRun& run, const std::vector<int>& worlds) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const LoadedModel loaded = load_model(model, *backend);
  ModelRunner runner(*loaded.model, *backend, {.num_kv_blocks = 64});
  const Tensor whole = run_sequence(runner, run.tokens, run.prefill, run.chunk);
  const int64_t n = static_cast<int64_t>(run.tokens.size());
  const bool moe = has_moe_layers(*loaded.model);
  // 1e-5 relative to the largest logit: dummy weights give logits up to ~5, and the ranks' sums
  // differ from one rank's only in the order of their additions.
  float largest = 1.0f;
  for (int64_t i = 0; i < whole.numel(); ++i) largest = std::max(largest, std::fabs(whole.data_as<float>()[i]));
  for (int world : worlds)
    for (const ExpertMode& mode : kExpertModes) {
      if (mode.expert_parallel && !moe) continue;
      const Tensor split = run_split(model, world, run, mode);
      ASSERT_TRUE(split.defined());
      EXPECT_LT(max_abs_diff_rows(whole, split, 0, n), 1e-5f * largest)
          << model.model_path << ": " << world << " ranks" << mode.name();
    }
}

class TensorParallelFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(TensorParallelFixture, SplitRanksGiveTheLogitsOfOne) {
  Fixture f = load_fixture(GetParam());
  const FixtureSequence& seq = f.sequences.at(0);
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 64});
  const int32_t n = static_cast<int32_t>(seq.tokens.size());
  const SplitRun run{.tokens = seq.tokens, .prefill = seq.prompt_len, .chunk = 5};
  const Tensor whole = run_sequence(runner, run.tokens, run.prefill, run.chunk);
  for (int world : split_sizes(GetParam()))
    for (const ExpertMode& mode : kExpertModes) {
      if (mode.expert_parallel && !has_moe_layers(*f.loaded.model)) continue;
      const Tensor split = run_split({.model_path = fixture_path("hf/" + GetParam())}, world, run, mode);
      ASSERT_TRUE(split.defined());
      EXPECT_LT(max_abs_diff_rows(whole, split, 0, n), 1e-5f) << world << " ranks" << mode.name();
    }
}

// Dispatched tokens with steps that leave ranks without rows: prefill in steps of 1 and of 3
// tokens (the last shorter), then decode (1), over 2 and 4 ranks; every other ExpertMode test
// prefills in steps of 5.
TEST(TensorParallel, DispatchedStepsOfAnyTokenCountGiveTheLogitsOfOne) {
  Fixture f = load_fixture("qwen3_moe");
  const FixtureSequence& seq = f.sequences.at(0);
  const int64_t n = static_cast<int64_t>(seq.tokens.size());
  for (int32_t chunk : {1, 3}) {
    ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 64});
    const SplitRun run{.tokens = seq.tokens, .prefill = seq.prompt_len, .chunk = chunk};
    const Tensor whole = run_sequence(runner, run.tokens, run.prefill, run.chunk);
    for (int world : {2, 4}) {
      const Tensor split = run_split({.model_path = fixture_path("hf/qwen3_moe")}, world, run, kExpertModes[2]);
      ASSERT_TRUE(split.defined());
      EXPECT_LT(max_abs_diff_rows(whole, split, 0, n), 1e-5f) << world << " ranks, steps of " << chunk;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(DenseFixtures, TensorParallelFixture,
                         ::testing::Values("llama", "qwen2", "qwen3", "gemma3_text"));
// Each rank holds every expert's intermediate columns (64, 256, 256 and 64 here, gpt-oss's fused
// and interleaved gate_up and its MXFP4 blocks re-laid out per rank), or with expert_parallel
// num_experts / ranks whole experts (8, 4, 4 and 8 here). DeepSeek-V3 also splits its latent
// attention's heads (q_lora_rank 64, and none in deepseek_v3_yarn).
INSTANTIATE_TEST_SUITE_P(MoeFixtures, TensorParallelFixture,
                         ::testing::Values("qwen3_moe", "mixtral", "gpt_oss", "gpt_oss_mxfp4", "deepseek_v3",
                                           "deepseek_v3_yarn"));
// Recurrent mixers: Gated DeltaNet (grouped in_proj_qkvz, or Qwen3.5's split projections) and
// Mamba-2 with its one group kept by every rank and its norm over the whole intermediate.
INSTANTIATE_TEST_SUITE_P(HybridFixtures, TensorParallelFixture,
                         ::testing::Values("qwen3_next", "qwen3_5_moe_text", "mamba2", "nemotron_h", "nemotron_h_moe",
                                           "nemotron_h_latent_moe"));
// Qwen4-Exp: hyper-connection streams, PLE carries and the QSA indexer whole on every rank (each
// selects the same blocks); QSA's query and key/value heads, DeltaNet heads and MoE columns split.
// DeepSeek-V4: mHC streams, routing (tid2eid too), the K = V head, compressors and indexer whole on
// every rank; query heads split with their output group (wo_a rows, wo_b columns), experts and
// shared expert split. Its first sequence (56 tokens) closes 14 CSA windows, more than index_topk 3.
INSTANTIATE_TEST_SUITE_P(StreamFixtures, TensorParallelFixture, ::testing::Values("qwen4_exp", "deepseek_v4"));

// DeepSeek-V4 with 8 heads in 4 output groups, dummy weights: one group and its 2 heads a rank over
// 4 ranks, two over 2 (28 tokens close 7 CSA windows, more than index_topk 3).
TEST(TensorParallel, DeepseekV4OutputGroupsSplitWithTheirHeads) {
  const LoadOptions model =
      changed_fixture("deepseek_v4", "deepseek_v4_4_groups", {{"num_attention_heads", 8}, {"o_groups", 4}});
  expect_split_equals_one(model, dummy_run(), {2, 4});
}

// Mamba-2 groups that split with their heads (Nemotron-H's norm per group stays on each rank), and
// 2 groups over 4 ranks, each kept by the 2 ranks whose heads read it; in_proj's bias splits with
// its rows, out_proj's enters the sum once.
TEST(TensorParallel, MambaGroupsSplitWithTheirHeads) {
  expect_split_equals_one(changed_fixture("nemotron_h", "nemotron_h_4_groups", {{"n_groups", 4}}), dummy_run(), {2, 4});
  expect_split_equals_one(changed_fixture("mamba2", "mamba2_2_groups_bias", {{"n_groups", 2}, {"use_bias", true}}),
                          dummy_run(), {2, 4});
}

// Gated DeltaNet with 4 key heads (8 value heads) over 4 ranks: one key head and its two value
// heads each, from the grouped in_proj_qkvz (Qwen3-Next) and the split projections (Qwen3.5).
TEST(TensorParallel, GatedDeltaNetKeyHeadsSplitOverFourRanks) {
  const nlohmann::json heads = {{"linear_num_key_heads", 4}, {"linear_num_value_heads", 8}};
  expect_split_equals_one(changed_fixture("qwen3_next", "qwen3_next_4_key_heads", heads), dummy_run(), {2, 4});
  expect_split_equals_one(changed_fixture("qwen3_5_moe_text", "qwen3_5_moe_4_key_heads", heads),
                          dummy_run(), {2, 4});
}

// Qwen3-MoE with a dense MLP in layer 0 (mlp_only_layers), dummy weights: the dense layer splits
// its columns and the MoE layer its experts in one model.
TEST(TensorParallel, DenseLayersOfAMoeModelSplitToo) {
  const LoadOptions model = changed_fixture("qwen3_moe", "qwen3_moe_dense_layer_0", {{"mlp_only_layers", {0}}});
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  EXPECT_EQ(load_model(model, *backend).model->layer_plan(),
            (std::vector<std::string>{"attention + mlp", "attention + moe"}));
  expect_split_equals_one(model, dummy_run(), {2, 4});
}

// The gpt_oss fixture with random expert biases (its own are zeros): the gate/up biases split
// with their columns, the down bias enters the sum once.
TEST(TensorParallel, GptOssExpertBiasesSplitWithTheirExperts) {
  const std::string dir = make_dir_once(temp_dir() + "/gpt_oss_expert_biases", [](const std::string& out) {
    const std::string fixture = fixture_path("hf/gpt_oss");
    std::filesystem::copy_file(fixture + "/config.json", out + "/config.json");
    const auto source = SafetensorsSource::open(fixture);
    std::vector<std::pair<std::string, Tensor>> tensors;
    uint32_t seed = 1;
    for (const std::string& name : source->names()) {
      const WeightInfo* info = source->find(name);
      const bool bias = name.find(".experts.") != std::string::npos && name.ends_with("_bias");
      tensors.emplace_back(name, bias ? random_f32(info->shape, seed++)
                                      : Tensor::view(const_cast<void*>(info->data), info->dtype, info->shape));
    }
    write_safetensors(out + "/model.safetensors", tensors);
  });
  expect_split_equals_one({.model_path = dir}, dummy_run(), {2, 4});
}

std::string load_error(const LoadOptions& model, const TensorShard& shard) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  LoadOptions options = model;
  options.shard = shard;
  try {
    load_model(options, *backend);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// FP8 experts (128-value blocks along each row, each with its scale): gate and up rows split
// anywhere, down_proj's columns only where blocks stay whole. qwen3_moe_fp8's 128 columns do not
// split; dummy FP8 weights of 256 columns (heads of 128, so o_proj's blocks stay whole too) split
// over 2 ranks by columns, and over 4 only by range.
TEST(TensorParallel, Fp8ExpertsSplitWhereBlocksStayWhole) {
  EXPECT_EQ(load_error({.model_path = fixture_path("hf/qwen3_moe_fp8")}, {.rank = 1, .size = 2}),
            "model.layers.0.mlp.experts.0.down_proj.weight: stored as fp8_b128 in blocks of 128 values along the "
            "experts' intermediate size (128), which --tensor-parallel-size 2 cuts into 64 columns a rank; choose a "
            "size that keeps blocks whole (1), or add --enable-expert-parallel to give each rank 4 of the 8 experts "
            "whole");
  LoadOptions model = changed_fixture("qwen3_moe", "qwen3_moe_256_columns_fp8",
                                      {{"moe_intermediate_size", 256}, {"head_dim", 128}});
  model.quantization = WeightQuantization::kFp8;
  EXPECT_EQ(load_error(model, {.rank = 0, .size = 4}),
            "model.layers.0.mlp.experts.0.down_proj.weight: stored as fp8_b128 in blocks of 128 values along the "
            "experts' intermediate size (256), which --tensor-parallel-size 4 cuts into 64 columns a rank; choose a "
            "size that keeps blocks whole (1, 2), or add --enable-expert-parallel to give each rank 2 of the 8 experts "
            "whole");
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const LoadedModel loaded = load_model(model, *backend);
  ModelRunner runner(*loaded.model, *backend, {.num_kv_blocks = 64});
  const SplitRun run = dummy_run();
  const Tensor whole = run_sequence(runner, run.tokens, run.prefill, run.chunk);
  float largest = 1.0f;
  for (int64_t i = 0; i < whole.numel(); ++i) largest = std::max(largest, std::fabs(whole.data_as<float>()[i]));
  for (const auto& [world, mode] : {std::pair{2, kExpertModes[0]}, std::pair{2, kExpertModes[1]},
                                    std::pair{4, kExpertModes[1]}, std::pair{4, kExpertModes[2]}}) {
    const Tensor split = run_split(model, world, run, mode);
    ASSERT_TRUE(split.defined());
    EXPECT_LT(max_abs_diff_rows(whole, split, 0, static_cast<int64_t>(run.tokens.size())), 1e-5f * largest)
        << world << " ranks" << mode.name();
  }
}

// 66 columns do not split over 4 ranks, but the 8 experts would.
TEST(TensorParallel, RefusesExpertColumnsThatDoNotDivide) {
  const LoadOptions model = changed_fixture("qwen3_moe", "qwen3_moe_66_columns", {{"moe_intermediate_size", 66}});
  EXPECT_EQ(load_error(model, {.rank = 0, .size = 4}),
            "--tensor-parallel-size 4 does not divide the experts' intermediate size (66); choose a size that does, "
            "or add --enable-expert-parallel to give each rank 2 of the 8 experts whole");
  EXPECT_EQ(load_error(model, {.rank = 0, .size = 4, .expert_parallel = true}), "no error");
}

// A vocabulary of 300 is padded to 384 rows over 2 ranks and to 512 over 4 (whose last rank holds
// padding only): tied tables (qwen3; gemma3_text with its embedding scale) and an untied head
// (llama) give one rank's logits.
TEST(TensorParallel, PaddedVocabularySplitsLikeTheWholeOne) {
  for (const std::string fixture : {"qwen3", "gemma3_text", "llama"})
    expect_split_equals_one(changed_fixture(fixture, fixture + "_vocab_300", {{"vocab_size", 300}}), dummy_run(),
                            {2, 4});
}

TEST(TensorParallel, RefusesASizeThatDoesNotDivideTheHeads) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  try {
    load_model({.model_path = fixture_path("hf/llama"), .shard = {.rank = 0, .size = 3}}, *backend);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--tensor-parallel-size 3 does not divide num_attention_heads (4)"),
              std::string::npos) << e.what();
  }
}

// What each split refuses, named with the config key and the size that does not divide it.
TEST(TensorParallel, RefusesSizesThatDoNotDivideTheRecurrentHeads) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const std::pair<std::string, int> cases[] = {{"qwen3_next", 4}, {"mamba2", 3}};
  const std::string messages[] = {"--tensor-parallel-size 4 does not divide linear_num_key_heads (2)",
                                  "--tensor-parallel-size 3 does not divide the Mamba-2 heads (num_heads) (8)"};
  for (int i = 0; i < 2; ++i) {
    const auto& [fixture, size] = cases[i];
    try {
      load_model({.model_path = fixture_path("hf/" + fixture), .shard = {.rank = 0, .size = size}}, *backend);
      ADD_FAILURE() << fixture << ": expected an Error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(messages[i]), std::string::npos) << e.what();
    }
  }
}

// ModernBERT's attention reads its fused Wqkv and its MLP its fused Wi: neither splits yet.
TEST(TensorParallel, RefusesLayersThatDoNotSplit) {
  const std::string error = load_error({.model_path = fixture_path("hf/modernbert_embedding")}, {.rank = 0, .size = 2});
  EXPECT_NE(error.find("does not split over tensor-parallel ranks yet"), std::string::npos) << error;
}

// A rank takes whole output groups of DeepSeek-V4's attention: 4 ranks do not divide the fixture's 2.
TEST(TensorParallel, RefusesASizeThatDoesNotDivideTheOutputGroups) {
  EXPECT_EQ(load_error({.model_path = fixture_path("hf/deepseek_v4")}, {.rank = 0, .size = 4}),
            "model.layers.0.attn: --tensor-parallel-size 4 does not divide o_groups (2): each rank takes whole groups "
            "of the grouped output projection (wo_a) with their heads; choose a size that divides o_groups");
}

TEST(RankMessage, StepRowsSurviveTheBytes) {
  const StepRow row{.seq_id = 7, .token_ids = {3, 1, 4}, .num_computed_tokens = 16, .block_table = {2, 9},
                    .ssm_slot = 5, .ssm_snapshots = {{.after_tokens = 2, .slot = 11}}, .keep_intermediates = true,
                    .logits = LogitsMode::kAll, .lora_slot = -1};
  const RankMessage back = decode_rank_message(encode_rank_message(
      {.kind = RankMessage::Kind::kStep, .rows = {row}, .block_size = 16, .min_blocks_per_row = 4}));
  ASSERT_EQ(back.kind, RankMessage::Kind::kStep);
  ASSERT_EQ(back.rows.size(), 1u);
  const StepRow& r = back.rows[0];
  EXPECT_EQ(r.seq_id, 7);
  EXPECT_EQ(r.token_ids, (std::vector<int32_t>{3, 1, 4}));
  EXPECT_EQ(r.num_computed_tokens, 16);
  EXPECT_EQ(r.block_table, (std::vector<int32_t>{2, 9}));
  EXPECT_EQ(r.ssm_slot, 5);
  ASSERT_EQ(r.ssm_snapshots.size(), 1u);
  EXPECT_EQ(r.ssm_snapshots[0].after_tokens, 2);
  EXPECT_EQ(r.ssm_snapshots[0].slot, 11);
  EXPECT_TRUE(r.keep_intermediates);
  EXPECT_EQ(r.logits, LogitsMode::kAll);
  EXPECT_EQ(back.block_size, 16);
  EXPECT_EQ(back.min_blocks_per_row, 4);
  const RankMessage copy = decode_rank_message(
      encode_rank_message({.kind = RankMessage::Kind::kCopyKvBlock, .src_block = 3, .dst_block = 8}));
  EXPECT_EQ(copy.src_block, 3);
  EXPECT_EQ(copy.dst_block, 8);
}

TEST(RankMessage, RefusesRowsWithDeviceSamples) {
  const StepRow row{.seq_id = 1, .token_ids = {0}, .pending_sample = 0};
  EXPECT_THROW(encode_rank_message({.kind = RankMessage::Kind::kStep, .rows = {row}, .block_size = 16}), Error);
}

}  // namespace
}  // namespace strata::test
