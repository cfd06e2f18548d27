// Micro-batches in flight over pipeline stages on the CPU: 2 to 4 stages (threads of this process
// with the shared-memory control channel and links, tensor-parallel pairs within them for 2 x 2)
// run the engine's steps, stage 0 starting the next micro-batch while each later stage runs one
// before it. Greedy tokens equal one process's, with chunked prefill, n > 1, preemption under a
// tiny KV pool (swapped and recomputed), prefix-cache hits and cancellations mid-flight, on dense,
// MoE and hybrid fixtures; one micro-batch per stage was in flight.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "engine/speculation_test_support.h"
#include "parallel/rank_threads_support.h"
#include "strata/engine/rank_worker.h"
#include "strata/model/model_loader.h"
#include "strata/parallel/parallel_group.h"
#include "strata/parallel/step_message.h"
#include "strata/text/id_tokenizer.h"
#include "test_support.h"

namespace strata::test {
namespace {

constexpr double kLogprobTolerance = 1e-5;

struct EngineRun {
  std::vector<SpeculationResults> waves;
  EngineStatsSnapshot stats;
};

struct RunSpec {
  int stages = 1;
  int tp = 1;  // tensor-parallel ranks within each stage
  int64_t num_kv_blocks = 256;
  EngineOptions options;
};

// "qwen3_moe_deep": the qwen3_moe fixture's config with 4 layers and dummy weights (its own 2
// layers split into 2 stages at most); any other name: that fixture.
LoadOptions fixture_model(const std::string& fixture) {
  if (fixture != "qwen3_moe_deep") return {.model_path = fixture_path("hf/" + fixture)};
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(temp_dir()) / per_test_name("qwen3_moe_deep");
  fs::create_directories(dir);
  std::ifstream in(fixture_path("hf/qwen3_moe/config.json"));
  nlohmann::json config = nlohmann::json::parse(in);
  config["num_hidden_layers"] = 4;
  write_file_atomically((dir / "config.json").string(), config.dump(2));
  return {.model_path = dir.string(), .load_format = LoadFormat::kDummy};
}

EngineRun run_engine(ModelRunner& runner, const std::vector<std::vector<GenerationRequest>>& waves,
                     const EngineOptions& options) {
  const std::unique_ptr<text::Tokenizer> tokenizer =
      text::make_id_tokenizer(static_cast<int32_t>(runner.model().config().vocab_size));
  CheckedEngine engine(runner, *tokenizer, {}, options);
  EngineRun out{.waves = run_waves(engine, waves)};
  engine.shutdown(std::chrono::seconds(5));
  out.stats = engine.stats();
  return out;
}

// Each rank (a thread, rank = stage * tp + tensor-parallel rank) loads its part of `fixture`;
// rank 0 runs `on_rank0`.
EngineRun run_stages(const std::string& fixture, const RunSpec& spec,
                     const std::function<EngineRun(ModelRunner&)>& on_rank0) {
  EngineRun out;
  const LoadOptions model = fixture_model(fixture);
  const std::string group = fmt::format("strata-test-ppmb-{}-{}", getpid(),
                                        per_test_name(fmt::format("{}-{}x{}", fixture, spec.tp, spec.stages)));
  const std::chrono::milliseconds timeout = std::chrono::seconds(60);
  run_rank_threads(spec.stages * spec.tp, [&](int rank) {
    const int stage = rank / spec.tp, tp_rank = rank % spec.tp;
    std::unique_ptr<Communicator> control, tensor_parallel;
    OpenLinks open;
    if (spec.stages * spec.tp > 1)
      control = make_shared_memory_communicator({.rank = rank, .world_size = spec.stages * spec.tp,
                                                 .group_name = group + ".control", .timeout = timeout});
    if (spec.tp > 1)
      tensor_parallel = make_shared_memory_communicator({.rank = tp_rank, .world_size = spec.tp,
                                                         .group_name = fmt::format("{}.tp-{}", group, stage),
                                                         .timeout = timeout});
    if (spec.stages > 1)
      open = open_pipeline_links({.rank = stage, .world_size = spec.stages,
                                  .group_name = fmt::format("{}.stages-{}", group, tp_rank), .timeout = timeout},
                                 make_shared_memory_communicator);
    const PipelineLinks links = open.links();
    std::unique_ptr<Backend> backend = make_cpu_backend(1);
    LoadOptions options = model;
    options.shard = {.rank = tp_rank, .size = spec.tp};
    options.pipeline_stage = stage;
    options.pipeline_parallel_size = spec.stages;
    const LoadedModel loaded = load_model(options, *backend);
    ModelRunner runner(*loaded.model, *backend,
                       {.num_kv_blocks = spec.num_kv_blocks, .num_ssm_slots = 96,
                        .tensor_parallel = tensor_parallel.get(), .rank_control = control.get(),
                        .pipeline = spec.stages > 1 ? &links : nullptr});
    if (rank > 0) return serve_first_rank(runner, *control);
    out = on_rank0(runner);
    if (control) send_to_ranks(*control, {.kind = RankMessage::Kind::kStop});
  });
  return out;
}

EngineRun run_stages(const std::string& fixture, const std::vector<std::vector<GenerationRequest>>& waves,
                     const RunSpec& spec) {
  return run_stages(fixture, spec, [&](ModelRunner& runner) { return run_engine(runner, waves, spec.options); });
}

// The speculation tests' mix (a 100-token prompt chunked at 64, n = 2, logprobs, a penalty) and
// ten more greedy requests, so that each of two micro-batches holds several.
std::vector<GenerationRequest> concurrent_requests() {
  std::vector<GenerationRequest> requests = speculation_greedy_requests(1);
  for (int32_t i = 0; i < 10; ++i)
    requests.push_back({.prompt_ids = engine_prompt(40 + i, 7 + 3 * i), .sampling = {.temperature = 0},
                        .max_tokens = 12 + i, .ignore_eos = true});
  return requests;
}

struct Layout {
  std::string fixture;
  int stages = 2, tp = 1;
};

void PrintTo(const Layout& layout, std::ostream* out) {
  *out << fmt::format("{} over {} x {}", layout.fixture, layout.tp, layout.stages);
}

std::string layout_name(const ::testing::TestParamInfo<Layout>& info) {
  return fmt::format("{}_{}x{}", info.param.fixture, info.param.tp, info.param.stages);
}

class PipelineMicroBatches : public ::testing::TestWithParam<Layout> {
 protected:
  RunSpec split(RunSpec one) const {
    one.stages = GetParam().stages;
    one.tp = GetParam().tp;
    return one;
  }
  const std::string& fixture() const { return GetParam().fixture; }
};

// The second wave repeats the first: its prompts hit the prefix cache (the hybrid's at its
// snapshots every 16 tokens, 64 kept). A micro-batch holds fewer rows than one process's step, and the CPU
// linear picks its kernel by row count: log-probabilities round apart (runner tests: same steps,
// same bits).
TEST_P(PipelineMicroBatches, OnePerStageInFlightGivesTheTokensOfOneProcess) {
  const std::vector<std::vector<GenerationRequest>> waves = {concurrent_requests(), concurrent_requests()};
  const RunSpec one{.options = {.max_num_batched_tokens = 64, .ssm_cache_slots = 64, .ssm_snapshot_interval = 16}};
  const EngineRun whole = run_stages(fixture(), waves, one);
  const EngineRun split = run_stages(fixture(), waves, this->split(one));
  ASSERT_EQ(split.waves.size(), waves.size());  // empty when a rank failed
  for (size_t w = 0; w < waves.size(); ++w)
    expect_same_results(split.waves[w], whole.waves[w], fmt::format("wave {}", w), kLogprobTolerance);
  EXPECT_EQ(split.stats.max_micro_batches_in_flight, GetParam().stages);
  EXPECT_EQ(whole.stats.max_micro_batches_in_flight, 0);
  EXPECT_GT(split.stats.prefix_cache_hits_total, 0u);
  EXPECT_EQ(split.stats.prefix_cache_hits_total, whole.stats.prefix_cache_hits_total);
}

// 8 blocks of 16 tokens for 8 sequences of 40: preempted ones move to host memory, or recompute.
TEST_P(PipelineMicroBatches, PreemptionUnderATinyKvPoolKeepsTokensExact) {
  std::vector<GenerationRequest> requests = preemption_requests();
  for (int32_t i = 4; i < 8; ++i)
    requests.push_back({.prompt_ids = engine_prompt(i, 20), .sampling = {.temperature = 0}, .max_tokens = 20,
                        .ignore_eos = true});
  // Two stages of one rank run the same rows as one process here; more split them otherwise.
  const double tolerance = GetParam().stages == 2 && GetParam().tp == 1 ? 0.0 : kLogprobTolerance;
  for (double swap_gib : {4.0, 0.0}) {
    const RunSpec one{.num_kv_blocks = 8, .options = {.max_num_batched_tokens = 64, .swap_space_gib = swap_gib}};
    const EngineRun whole = run_stages(fixture(), {requests}, one);
    const EngineRun split = run_stages(fixture(), {requests}, this->split(one));
    const std::string what = fmt::format("swap space {} GiB", swap_gib);
    ASSERT_EQ(split.waves.size(), 1u) << what;
    expect_same_results(split.waves[0], whole.waves[0], what, tolerance);
    EXPECT_GT(split.stats.preemptions_total, 0u) << what;
    EXPECT_EQ(split.stats.max_micro_batches_in_flight, GetParam().stages) << what;
  }
}

// Requests cancelled while their steps are in flight free their blocks and slots at once (the
// stages still run those steps, in order); the requests after them answer as one process's.
TEST_P(PipelineMicroBatches, CancelledWhileInFlightLeavesTheStagesExact) {
  const std::vector<std::vector<GenerationRequest>> waves = {concurrent_requests()};
  const RunSpec one{.options = {.max_num_batched_tokens = 64}};
  const RunSpec spec = split(one);
  const EngineRun whole = run_stages(fixture(), waves, one);
  const EngineRun split = run_stages(fixture(), spec, [&](ModelRunner& runner) {
    const std::unique_ptr<text::Tokenizer> tokenizer =
        text::make_id_tokenizer(static_cast<int32_t>(runner.model().config().vocab_size));
    CheckedEngine engine(runner, *tokenizer, {}, spec.options);
    std::vector<std::shared_ptr<RequestStream>> streams;
    for (int32_t i = 0; i < 8; ++i)
      streams.push_back(engine.submit({.prompt_ids = engine_prompt(60 + i, 9 + i), .max_tokens = 100,
                                       .ignore_eos = true}));
    for (const auto& stream : streams) EXPECT_TRUE(stream->pop(std::chrono::seconds(30)).has_value());
    for (const auto& stream : streams) engine.cancel(stream->request_id());
    for (const auto& stream : streams) EXPECT_EQ(collect_choices(*stream, 1)[0].finish, FinishReason::kCancelled);
    EngineRun out{.waves = run_waves(engine, waves)};
    out.stats = engine.stats();
    return out;
  });
  ASSERT_EQ(split.waves.size(), 1u);
  expect_same_results(split.waves[0], whole.waves[0], "after cancels", kLogprobTolerance);
  EXPECT_EQ(split.stats.requests_cancelled_total, 8u);
  EXPECT_EQ(split.stats.max_micro_batches_in_flight, GetParam().stages);
}

// Two stages; 3 and 4 (qwen3_moe_deep: the MoE config with 4 layers, its own 2 split twice at
// most); 2 x 2 with tensor-parallel pairs inside the stages.
INSTANTIATE_TEST_SUITE_P(TwoStages, PipelineMicroBatches,
                         ::testing::Values(Layout{"llama"}, Layout{"qwen3_moe"}, Layout{"qwen3_next"}), layout_name);
INSTANTIATE_TEST_SUITE_P(MoreStages, PipelineMicroBatches,
                         ::testing::Values(Layout{"llama", 3}, Layout{"qwen3_moe_deep", 3},
                                           Layout{"qwen3_moe_deep", 4}, Layout{"qwen3_next", 3},
                                           Layout{"qwen3_next", 4}),
                         layout_name);
INSTANTIATE_TEST_SUITE_P(TensorParallelStages, PipelineMicroBatches,
                         ::testing::Values(Layout{"llama", 2, 2}, Layout{"qwen3_moe", 2, 2},
                                           Layout{"qwen3_next", 2, 2}),
                         layout_name);

// The escape hatch: one step in flight, as before micro-batches, with the same tokens.
TEST(PipelineMicroBatchesOff, OneStepInFlight) {
  const std::vector<std::vector<GenerationRequest>> waves = {concurrent_requests()};
  RunSpec spec{.stages = 2, .options = {.max_num_batched_tokens = 64}};
  const EngineRun on = run_stages("llama", waves, spec);
  spec.options.pipeline_micro_batches = false;
  const EngineRun off = run_stages("llama", waves, spec);
  ASSERT_EQ(off.waves.size(), 1u);
  ASSERT_EQ(on.waves.size(), 1u);
  expect_same_results(off.waves[0], on.waves[0], "micro-batches off", kLogprobTolerance);
  EXPECT_EQ(off.stats.max_micro_batches_in_flight, 0);
}

}  // namespace
}  // namespace strata::test
