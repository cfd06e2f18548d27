// The command line that starts `strata rank` reads back, through the strata command's own flag
// parser, into the model flags it was made from: a rank opens the same model, split the same way,
// with the same LoRA slots.
#include <gtest/gtest.h>

#include "strata/cli/rank_command.h"
#include "strata/core/error.h"

namespace strata::cli {
namespace {

// Every field model_flag_args carries, away from its default.
ModelFlags unusual_flags() {
  ModelFlags flags;
  flags.model = "/models/with space";
  flags.revision = "v2";
  flags.load_format = "dummy";
  flags.quantization = "fp8";
  flags.device = "cpu";
  flags.threads = 3;
  flags.num_kv_blocks = 77;
  flags.gpu_memory_utilization = 0.37;
  flags.ssm_state_dtype = "f16";
  flags.kv_cache_dtype = "fp8";
  flags.pooling = {.runner = "pooling", .task = "embed", .pooler_config = R"({"pooling_type": "MEAN"})"};
  flags.tensor_parallel.size = 2;
  flags.tensor_parallel.expert_parallel = true;
  flags.tensor_parallel.dispatch_tokens = true;
  flags.pipeline_parallel.size = 3;
  return flags;
}

ModelFlags parse(const std::vector<std::string>& args) {
  ModelFlags flags;
  CLI::App app;
  add_model_flags(app, flags);
  add_parallel_flags(app, flags);
  std::vector<const char*> argv{"strata"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return flags;
}

TEST(RankCommand, ModelFlagsReadBackAsTheyWere) {
  const ModelFlags given = unusual_flags();
  const ModelFlags read = parse(model_flag_args(given));
  EXPECT_EQ(read.model, given.model);
  EXPECT_EQ(read.revision, given.revision);
  EXPECT_EQ(read.load_format, given.load_format);
  EXPECT_EQ(read.quantization, given.quantization);
  EXPECT_EQ(read.device, given.device);
  EXPECT_EQ(read.threads, given.threads);
  EXPECT_EQ(read.num_kv_blocks, given.num_kv_blocks);
  EXPECT_EQ(read.gpu_memory_utilization, given.gpu_memory_utilization);
  EXPECT_EQ(read.ssm_state_dtype, given.ssm_state_dtype);
  EXPECT_EQ(read.kv_cache_dtype, given.kv_cache_dtype);
  EXPECT_EQ(read.pooling.runner, given.pooling.runner);
  EXPECT_EQ(read.pooling.task, given.pooling.task);
  EXPECT_EQ(read.pooling.pooler_config, given.pooling.pooler_config);
  EXPECT_EQ(read.tensor_parallel.size, 2);
  EXPECT_TRUE(read.tensor_parallel.expert_parallel);
  EXPECT_TRUE(read.tensor_parallel.dispatch_tokens);
  EXPECT_EQ(read.pipeline_parallel.size, 3);
  EXPECT_EQ(read.tensor_parallel.rank, 0);  // a rank's place is appended by rank 0
}

TEST(RankCommand, DefaultsReadBackToDefaults) {
  ModelFlags given;
  given.model = "m";
  const ModelFlags read = parse(model_flag_args(given));
  EXPECT_EQ(read.pooling.task, "");
  EXPECT_EQ(read.pooling.pooler_config, "");
  EXPECT_FALSE(read.tensor_parallel.expert_parallel);
  EXPECT_FALSE(read.tensor_parallel.dispatch_tokens);
  EXPECT_EQ(read.gpu_memory_utilization, given.gpu_memory_utilization);
}

// --expert-dispatch takes its two modes by name; anything else is an Error naming both.
TEST(RankCommand, ExpertDispatchReadsItsModes) {
  EXPECT_TRUE(parse({"--model", "m", "--expert-dispatch", "all-to-all"}).tensor_parallel.dispatch_tokens);
  EXPECT_FALSE(parse({"--model", "m", "--expert-dispatch", "all-reduce"}).tensor_parallel.dispatch_tokens);
  try {
    parse({"--model", "m", "--expert-dispatch", "a2a"});
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--expert-dispatch a2a: expected all-reduce or all-to-all");
  }
}

TEST(RankCommand, RunsTheRankSubcommandOfTheGivenProgram) {
  const RankCommand command = rank_command("/opt/bin/strata", unusual_flags());
  EXPECT_EQ(command.program, "/opt/bin/strata");
  ASSERT_GE(command.args.size(), 4u);
  EXPECT_EQ(command.args[0], "/opt/bin/strata");
  EXPECT_EQ(command.args[1], "rank");
  EXPECT_EQ(command.args[2], "--model");
}

TEST(RankCommand, LoraSlotsReadBackAsTheyWere) {
  auto read = [](const std::optional<LoraCapacity>& lora) {
    const RankCommand command = rank_command("strata", unusual_flags(), lora);
    ModelFlags model;
    RankLoraFlags flags;
    CLI::App app;
    add_model_flags(app, model);
    add_parallel_flags(app, model);
    add_rank_lora_flags(app, flags);
    std::vector<const char*> argv{"strata"};
    for (size_t i = 2; i < command.args.size(); ++i) argv.push_back(command.args[i].c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());
    return flags.capacity();
  };
  const std::optional<LoraCapacity> slots = read(LoraCapacity{.max_loras = 3, .max_lora_rank = 32});
  ASSERT_TRUE(slots.has_value());
  EXPECT_EQ(slots->max_loras, 3);
  EXPECT_EQ(slots->max_lora_rank, 32);
  EXPECT_FALSE(read(std::nullopt).has_value());
}

}  // namespace
}  // namespace strata::cli
