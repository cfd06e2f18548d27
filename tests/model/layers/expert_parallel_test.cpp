// MoE blocks with shared experts split over 2 and 4 ranks (threads with a shared-memory
// communicator): each rank holds a range of the experts and the shared expert's columns, and
// after the block's one all-reduce every rank has the whole block's output. The fixtures' logits
// under expert parallelism are in tests/model/tensor_parallel_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "strata/core/error.h"
#include "strata/core/model_config.h"
#include "strata/model/arch/common.h"
#include "strata/model/layers/moe.h"
#include "strata/model/layers/normed_input.h"
#include "strata/parallel/communicator.h"
#include "strata/weights/safetensors_source.h"
#include "test_support.h"

namespace strata::test {
namespace {

struct MoeBlock {
  std::string fixture;  // under hf/
  std::string scope;    // the block's weights
  MoeOptions options;
  MoeWeightNames names;
};

// Qwen3-Next: softmax routing, a shared expert scaled by sigmoid(shared_expert_gate(x)).
MoeBlock qwen3_next_block() {
  const ModelConfig config = ModelConfig::from_file(fixture_path("hf/qwen3_next/config.json"));
  MoeOptions options = qwen_moe_options(config);
  options.shared_intermediate_size = config.require_int("shared_expert_intermediate_size");
  options.shared_expert_gate = true;
  return {.fixture = "qwen3_next", .scope = "model.layers.0.mlp", .options = options, .names = {}};
}

// DeepSeek-V3: grouped sigmoid routing with a correction bias, an ungated shared expert.
MoeBlock deepseek_v3_block() {
  const ModelConfig config = ModelConfig::from_file(fixture_path("hf/deepseek_v3/config.json"));
  MoeOptions options = grouped_sigmoid_moe_options(config);
  options.activation = ops::parse_activation(config.hidden_act);
  options.shared_intermediate_size = options.intermediate_size * config.require_int("n_shared_experts");
  return {.fixture = "deepseek_v3", .scope = "model.layers.1.mlp", .options = options,
          .names = {.shared_expert = "shared_experts"}};
}

// The block's output on x [T, hidden] at rank `rank` of `world`; world 1: no communicator.
Tensor block_output(const MoeBlock& block, const Tensor& x, int rank, int world, const std::string& group) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const auto source = SafetensorsSource::open(fixture_path("hf/" + block.fixture));
  const ModelWeights weights(source.get(), *backend, {.shard = {.rank = rank, .size = world}});
  const MoeFfn moe(block.options, WeightScope(weights, block.scope), block.names);
  std::unique_ptr<Communicator> comm;
  if (world > 1)
    comm = make_shared_memory_communicator(
        {.rank = rank, .world_size = world, .group_name = group, .timeout = std::chrono::seconds(60)});
  Workspace workspace(*backend), step_workspace(*backend);
  ForwardContext ctx{.backend = *backend, .workspace = workspace, .step_workspace = step_workspace,
                     .tensor_parallel = comm.get()};
  Tensor out = Tensor::host(DType::kF32, x.shape());
  NormedInput in = NormedInput::normalized(x);
  moe.forward(in, out, ctx, SublayerWrite::kStore);
  return out;
}

void expect_split_equals_whole(const MoeBlock& block) {
  const Tensor x = random_f32({7, block.options.hidden_size}, 11);
  const Tensor whole = block_output(block, x, 0, 1, "");
  for (int world : {2, 4}) {
    const std::string group =
        fmt::format("strata-test-ep-{}-{}", getpid(), per_test_name(std::to_string(world)));
    std::vector<Tensor> outs(world);
    std::vector<std::string> errors(world);
    std::vector<std::thread> ranks;
    for (int r = 0; r < world; ++r)
      ranks.emplace_back([&, r] {
        try {
          outs[r] = block_output(block, x, r, world, group);
        } catch (const std::exception& e) {
          errors[r] = e.what();
        }
      });
    for (std::thread& t : ranks) t.join();
    for (int r = 0; r < world; ++r) {
      ASSERT_EQ(errors[r], "") << "rank " << r;
      EXPECT_LT(max_abs_diff(whole, outs[r]), 1e-5f) << block.fixture << ": rank " << r << " of " << world;
    }
  }
}

TEST(ExpertParallel, GatedSharedExpertBlockSplitsOverRanks) { expect_split_equals_whole(qwen3_next_block()); }

TEST(ExpertParallel, GroupedSigmoidBlockWithSharedExpertSplitsOverRanks) {
  expect_split_equals_whole(deepseek_v3_block());
}

TEST(ExpertParallel, RefusesRanksThatDoNotDivideTheExperts) {
  try {
    block_output(qwen3_next_block(), random_f32({1, 128}, 1), 0, 3, "unused");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--tensor-parallel-size 3 does not divide num_experts (8)"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata::test
