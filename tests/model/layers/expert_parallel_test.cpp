// MoE blocks split over 2 and 4 ranks (threads with a shared-memory communicator), both ways
// vLLM splits them: every expert's intermediate columns on each rank (the default), or a range of
// whole experts (expert_parallel), with or without the tokens dispatched to their experts' ranks
// (7 tokens: 4 and 3 a rank over 2, 2, 2, 2 and 1 over 4); the shared expert by columns. After
// the block's collectives every rank has the whole block's output. Also: GGUF-style Q8_0 experts,
// whose down_proj columns split only at block boundaries. The fixtures' logits are in tests/model/tensor_parallel_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <thread>

#include "strata/core/error.h"
#include "strata/core/model_config.h"
#include "strata/model/arch/common.h"
#include "strata/model/layers/moe.h"
#include "strata/model/layers/normed_input.h"
#include "strata/ops/cpu/convert.h"
#include "strata/parallel/communicator.h"
#include "strata/weights/quant_blocks.h"
#include "strata/weights/safetensors_source.h"
#include "test_support.h"
#include "weights/memory_source.h"

namespace strata::test {
namespace {

struct MoeBlock {
  std::shared_ptr<const WeightSource> source;
  std::string scope;  // the block's weights
  MoeOptions options;
  MoeWeightNames names;
};

// Qwen3-Next: softmax routing, a shared expert scaled by sigmoid(shared_expert_gate(x)).
MoeBlock qwen3_next_block() {
  const ModelConfig config = ModelConfig::from_file(fixture_path("hf/qwen3_next/config.json"));
  MoeOptions options = qwen_moe_options(config);
  options.shared_intermediate_size = config.require_int("shared_expert_intermediate_size");
  options.shared_expert_gate = true;
  return {.source = SafetensorsSource::open(fixture_path("hf/qwen3_next")), .scope = "model.layers.0.mlp",
          .options = options, .names = {}};
}

// DeepSeek-V3: grouped sigmoid routing with a correction bias, an ungated shared expert.
MoeBlock deepseek_v3_block() {
  const ModelConfig config = ModelConfig::from_file(fixture_path("hf/deepseek_v3/config.json"));
  MoeOptions options = grouped_sigmoid_moe_options(config);
  options.activation = ops::parse_activation(config.hidden_act);
  options.shared_intermediate_size = options.intermediate_size * config.require_int("n_shared_experts");
  return {.source = SafetensorsSource::open(fixture_path("hf/deepseek_v3")), .scope = "model.layers.1.mlp",
          .options = options, .names = {.shared_expert = "shared_experts"}};
}

// Nemotron-H: relu² up/down experts and shared expert; `latent`: experts in a 48-wide latent space.
MoeBlock nemotron_h_block(bool latent) {
  const std::string fixture = latent ? "hf/nemotron_h_latent_moe" : "hf/nemotron_h_moe";
  const ModelConfig config = ModelConfig::from_file(fixture_path(fixture + "/config.json"));
  MoeOptions options = grouped_sigmoid_moe_options(config);
  options.activation = ops::Activation::kRelu2;
  options.gated = false;
  options.shared_intermediate_size = config.require_int("moe_shared_expert_intermediate_size");
  options.latent_size = config.get_int("moe_latent_size", 0);
  return {.source = SafetensorsSource::open(fixture_path(fixture)), .scope = "backbone.layers.1.mixer",
          .options = options, .names = {.shared_expert = "shared_experts"}};
}

// The block's output on x [T, hidden] at rank `rank` of `world`; world 1: no communicator.
Tensor block_output(const MoeBlock& block, const Tensor& x, const TensorShard& shard, const std::string& group) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const ModelWeights weights(block.source.get(), *backend, {.shard = shard});
  const MoeFfn moe(block.options, WeightScope(weights, block.scope), block.names);
  std::unique_ptr<Communicator> comm;
  if (shard.size > 1)
    comm = make_shared_memory_communicator(
        {.rank = shard.rank, .world_size = shard.size, .group_name = group, .timeout = std::chrono::seconds(60)});
  Workspace workspace(*backend), step_workspace(*backend);
  ForwardContext ctx{.backend = *backend, .workspace = workspace, .step_workspace = step_workspace,
                     .tensor_parallel = comm.get()};
  Tensor out = Tensor::host(DType::kF32, x.shape());
  NormedInput in = NormedInput::normalized(x);
  moe.forward(in, out, ctx, SublayerWrite::kStore);
  return out;
}

void expect_split_equals_whole(const MoeBlock& block, const std::vector<int>& worlds = {2, 4}) {
  const Tensor x = random_f32({7, block.options.hidden_size}, 11);
  const Tensor whole = block_output(block, x, {}, "");
  for (int world : worlds)
    for (const auto& [expert_parallel, dispatch] : {std::pair{false, false}, std::pair{true, false},
                                                   std::pair{true, true}}) {
      const std::string group = fmt::format("strata-test-ep-{}-{}", getpid(),
                                            per_test_name(fmt::format("{}-{}-{}", world, expert_parallel, dispatch)));
      std::vector<Tensor> outs(world);
      std::vector<std::string> errors(world);
      std::vector<std::thread> ranks;
      for (int r = 0; r < world; ++r)
        ranks.emplace_back([&, r] {
          try {
            outs[r] = block_output(block, x, {.rank = r, .size = world, .expert_parallel = expert_parallel,
                                              .dispatch_tokens = dispatch}, group);
          } catch (const std::exception& e) {
            errors[r] = e.what();
          }
        });
      for (std::thread& t : ranks) t.join();
      for (int r = 0; r < world; ++r) {
        ASSERT_EQ(errors[r], "") << "rank " << r;
        EXPECT_LT(max_abs_diff(whole, outs[r]), 1e-5f)
            << block.scope << ": rank " << r << " of " << world << ", expert_parallel " << expert_parallel
            << ", dispatch " << dispatch;
      }
    }
}

TEST(ExpertParallel, GatedSharedExpertBlockSplitsOverRanks) { expect_split_equals_whole(qwen3_next_block()); }

TEST(ExpertParallel, GroupedSigmoidBlockWithSharedExpertSplitsOverRanks) {
  expect_split_equals_whole(deepseek_v3_block());
}

TEST(ExpertParallel, UngatedAndLatentBlocksSplitOverRanks) {
  expect_split_equals_whole(nemotron_h_block(false));
  expect_split_equals_whole(nemotron_h_block(true));
}

// On a GPU every expert's columns split (the grouping is one rank's), while whole experts by range
// are refused when the layer is built: the CUDA grouping drops other ranks' pairs. Skipped without a GPU.
TEST(ExpertParallel, OnAGpuOnlyTheColumnSplitBuilds) {
  std::unique_ptr<Backend> gpu = make_cuda_backend(0);
  if (!gpu) GTEST_SKIP() << "no CUDA GPU visible";
  const MoeBlock block = qwen3_next_block();
  const auto build = [&](const TensorShard& shard) {
    const ModelWeights weights(block.source.get(), *gpu, {.shard = shard});
    const MoeFfn moe(block.options, WeightScope(weights, block.scope), block.names);
  };
  EXPECT_NO_THROW(build({.rank = 1, .size = 2}));
  try {
    build({.rank = 1, .size = 2, .expert_parallel = true});
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "model.layers.0.mlp: experts split by range (--enable-expert-parallel) run on the CPU only for now; "
              "leave out --enable-expert-parallel (each rank then holds every expert's share of the intermediate "
              "columns) or use --device cpu");
  }
  try {
    build({.rank = 1, .size = 2, .expert_parallel = true, .dispatch_tokens = true});
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "model.layers.0.mlp: --expert-dispatch all-to-all runs on the CPU only for now; use --expert-dispatch "
              "all-reduce (the default) or --device cpu");
  }
}

std::string error_of(const MoeBlock& block, const TensorShard& shard) {
  try {
    block_output(block, random_f32({1, block.options.hidden_size}, 1), shard, "unused");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Dispatch sends tokens to the rank holding their expert: it needs experts split by range.
TEST(ExpertParallel, DispatchNeedsExpertsByRange) {
  EXPECT_EQ(error_of(qwen3_next_block(), {.rank = 0, .size = 2, .dispatch_tokens = true}),
            "model.layers.0.mlp: --expert-dispatch all-to-all sends tokens to the ranks that hold their experts; "
            "add --enable-expert-parallel");
}

TEST(ExpertParallel, RefusesSizesThatDoNotDivide) {
  const MoeBlock block = qwen3_next_block();  // 8 experts of 64 columns
  EXPECT_EQ(error_of(block, {.rank = 0, .size = 3, .expert_parallel = true}),
            "--tensor-parallel-size 3 does not divide num_experts (8); choose a size that does");
  EXPECT_EQ(error_of(block, {.rank = 0, .size = 3}),
            "--tensor-parallel-size 3 does not divide the experts' intermediate size (64); choose a size that does");
  MoeBlock wide = block;  // dummy weights: any shape
  wide.source = nullptr;
  wide.options.intermediate_size = 66;
  EXPECT_EQ(error_of(wide, {.rank = 0, .size = 4}),
            "--tensor-parallel-size 4 does not divide the experts' intermediate size (66); choose a size that does, "
            "or add --enable-expert-parallel to give each rank 2 of the 8 experts whole");
}


// Random values as Q8_0 blocks (GGUF's 32-value blocks along the input dimension): [rows, cols].
Tensor random_q8_0(int64_t rows, int64_t cols, uint32_t seed) {
  const Tensor values = random_f32({rows, cols}, seed);
  Tensor q = Tensor::host(DType::kQ8_0, {rows, cols});
  auto* blocks = q.data_as<BlockQ8_0>();
  for (int64_t b = 0; b < rows * cols / 32; ++b) {
    const float* v = values.data_as<float>() + b * 32;
    float amax = 0.0f;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(v[i]));
    const float d = amax / 127.0f;
    cpu::narrow_from_f32(&d, DType::kF16, 1, &blocks[b].d);
    for (int i = 0; i < 32; ++i) blocks[b].qs[i] = static_cast<int8_t>(std::lround(v[i] / d));
  }
  return q;
}

// 4 experts of 64 columns over a 64-wide hidden size, their projections Q8_0 as a GGUF file
// stores qwen3moe's expert stacks; the router f32.
MoeBlock q8_0_block() {
  auto source = std::make_shared<MemorySource>();
  source->add("moe.gate.weight", random_f32({4, 64}, 5));
  for (int e = 0; e < 4; ++e) {
    source->add(fmt::format("moe.experts.{}.gate_proj.weight", e), random_q8_0(64, 64, 10 + e));
    source->add(fmt::format("moe.experts.{}.up_proj.weight", e), random_q8_0(64, 64, 20 + e));
    source->add(fmt::format("moe.experts.{}.down_proj.weight", e), random_q8_0(64, 64, 30 + e));
  }
  return {.source = source, .scope = "moe",
          .options = {.hidden_size = 64, .intermediate_size = 64, .num_experts = 4,
                      .route = {.top_k = 2, .scoring = ops::MoeScoring::kSoftmax}}};
}

TEST(ExpertParallel, QuantizedExpertsSplitAtBlockBoundariesOnly) {
  expect_split_equals_whole(q8_0_block(), {2});  // 32 of 64 columns a rank: one block each
  EXPECT_EQ(error_of(q8_0_block(), {.rank = 0, .size = 4}),
            "moe.experts.0.down_proj.weight: stored as q8_0 in blocks of 32 values along the experts' intermediate "
            "size (64), which --tensor-parallel-size 4 cuts into 16 columns a rank; choose a size that keeps blocks "
            "whole (1, 2), or add --enable-expert-parallel to give each rank 1 of the 4 experts whole");
}

}  // namespace
}  // namespace strata::test
