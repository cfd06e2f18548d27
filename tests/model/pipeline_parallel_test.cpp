// Pipeline parallelism on the CPU: the fixtures split into 2 to 4 stages (threads of this process,
// each with its own backend, runner and the shared-memory links) give bit for bit the logits of one
// process, for prefill, chunked prefill and decode: a stage runs the same kernels on the same rows,
// only elsewhere. Tensor parallelism within the stages (2 x 2 ranks) stays within 1e-5. Also: how
// layers are dealt, which tensors a stage loads, and what is refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>

#include <nlohmann/json.hpp>

#include "model/fixture_support.h"
#include "parallel/rank_threads_support.h"
#include "strata/core/error.h"
#include "strata/engine/rank_worker.h"
#include "strata/model/pipeline_stage.h"
#include "strata/parallel/parallel_group.h"
#include "strata/parallel/step_message.h"
#include "test_support.h"

namespace strata::test {
namespace {

// The ranks of tp x pp as threads, placed as ParallelGroup places processes (rank = stage * tp +
// tensor-parallel rank), each loading its heads of its stage's layers; rank 0 runs `run` and keeps
// its logits.
// aux_layers: rank 0's (an EAGLE-3 head's target layers); the other ranks take them from it.
Tensor run_layout(const LoadOptions& model, int tp, int pp, const std::function<Tensor(ModelRunner&)>& on_rank0,
                  const std::vector<int64_t>& aux_layers = {}) {
  Tensor logits;
  const std::string group = fmt::format("strata-test-pp-{}-{}", getpid(), per_test_name(fmt::format("{}x{}", tp, pp)));
  const std::chrono::milliseconds timeout = std::chrono::seconds(60);
  run_rank_threads(tp * pp, [&](int rank) {
    const int stage = rank / tp, tp_rank = rank % tp;
    std::unique_ptr<Communicator> control = make_shared_memory_communicator(
        {.rank = rank, .world_size = tp * pp, .group_name = group + ".control", .timeout = timeout});
    std::unique_ptr<Communicator> tensor_parallel;
    if (tp > 1)
      tensor_parallel = make_shared_memory_communicator(
          {.rank = tp_rank, .world_size = tp, .group_name = fmt::format("{}.tp-{}", group, stage), .timeout = timeout});
    const OpenLinks open = open_pipeline_links(
        {.rank = stage, .world_size = pp, .group_name = fmt::format("{}.stages-{}", group, tp_rank), .timeout = timeout},
        make_shared_memory_communicator);
    const PipelineLinks links = open.links();
    std::unique_ptr<Backend> backend = make_cpu_backend(1);
    LoadOptions options = model;
    options.shard = {.rank = tp_rank, .size = tp};
    options.pipeline_stage = stage;
    options.pipeline_parallel_size = pp;
    LoadedModel loaded = load_model(options, *backend);
    ModelRunner runner(*loaded.model, *backend,
                       {.num_kv_blocks = 64, .aux_hidden_layers = rank == 0 ? aux_layers : std::vector<int64_t>{},
                        .tensor_parallel = tensor_parallel.get(), .rank_control = control.get(), .pipeline = &links});
    if (rank > 0) return serve_first_rank(runner, *control);
    logits = on_rank0(runner);
    send_to_ranks(*control, {.kind = RankMessage::Kind::kStop});
  });
  return logits;
}

Tensor run_whole(const LoadOptions& model, const std::function<Tensor(ModelRunner&)>& run,
                 const std::vector<int64_t>& aux_layers = {}) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const LoadedModel loaded = load_model(model, *backend);
  ModelRunner runner(*loaded.model, *backend, {.num_kv_blocks = 64, .aux_hidden_layers = aux_layers});
  return run(runner);
}

std::function<Tensor(ModelRunner&)> sequence_run(const SplitRun& run) {
  return [run](ModelRunner& runner) { return run_sequence(runner, run.tokens, run.prefill, run.chunk); };
}

void expect_stages_equal_one(const LoadOptions& model, const SplitRun& run, const std::vector<int>& stage_counts) {
  const Tensor whole = run_whole(model, sequence_run(run));
  const int64_t n = static_cast<int64_t>(run.tokens.size());
  for (int stages : stage_counts) {
    const Tensor split = run_layout(model, 1, stages, sequence_run(run));
    ASSERT_TRUE(split.defined()) << stages << " stages";
    ASSERT_EQ(split.dim(0), n);
    EXPECT_EQ(max_abs_diff_rows(whole, split, 0, n), 0.0f) << model.model_path << ": " << stages << " stages";
  }
}

// Every stage count from 2 up to the fixture's layers, at most 4.
std::vector<int> stage_counts(const std::string& fixture) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const int64_t layers =
      load_model({.model_path = fixture_path("hf/" + fixture), .shapes_only = true}, *backend).model->num_layers();
  std::vector<int> counts;
  for (int s = 2; s <= std::min<int64_t>(layers, 4); ++s) counts.push_back(s);
  return counts;
}

class PipelineParallelFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(PipelineParallelFixture, StagesGiveTheLogitsOfOne) {
  const Fixture f = load_fixture(GetParam());
  const FixtureSequence& seq = f.sequences.at(0);
  const std::vector<int> counts = stage_counts(GetParam());
  ASSERT_FALSE(counts.empty());
  expect_stages_equal_one({.model_path = fixture_path("hf/" + GetParam())},
                          {.tokens = seq.tokens, .prefill = seq.prompt_len, .chunk = 5}, counts);
}

// Tied embeddings (qwen2, qwen3, gemma3_text): the last stage keeps the embedding as its head.
INSTANTIATE_TEST_SUITE_P(DenseFixtures, PipelineParallelFixture,
                         ::testing::Values("llama", "qwen2", "qwen3", "gemma3_text"));
INSTANTIATE_TEST_SUITE_P(MoeFixtures, PipelineParallelFixture,
                         ::testing::Values("qwen3_moe", "mixtral", "gpt_oss", "deepseek_v3"));
// qwen3_next over 2 stages: stage 1 holds the only attention layer, stage 0 none (its KV-block
// copies still reach stage 1). nemotron_h (M-*-) over 2: stage 1 holds no recurrent layer.
INSTANTIATE_TEST_SUITE_P(HybridFixtures, PipelineParallelFixture,
                         ::testing::Values("qwen3_next", "mamba2", "nemotron_h"));

TEST(PipelineStage, DealsLayersAsVllmDoes) {
  auto ranges = [](int64_t layers, int count) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int s = 0; s < count; ++s) {
      const PipelineStage stage = pipeline_stage(layers, s, count);
      EXPECT_EQ(stage.index, s);
      EXPECT_EQ(stage.count, count);
      out.emplace_back(stage.first_layer, stage.end_layer);
    }
    return out;
  };
  using Ranges = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(ranges(4, 2), (Ranges{{0, 2}, {2, 4}}));
  EXPECT_EQ(ranges(3, 2), (Ranges{{0, 2}, {2, 3}}));
  EXPECT_EQ(ranges(4, 3), (Ranges{{0, 1}, {1, 3}, {3, 4}}));
  EXPECT_EQ(ranges(5, 3), (Ranges{{0, 2}, {2, 4}, {4, 5}}));
  EXPECT_EQ(ranges(36, 5), (Ranges{{0, 7}, {7, 14}, {14, 21}, {21, 29}, {29, 36}}));
  EXPECT_EQ(ranges(3, 3), (Ranges{{0, 1}, {1, 2}, {2, 3}}));
  try {
    pipeline_stage(3, 0, 4);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--pipeline-parallel-size 4 exceeds the model's 3 layers"), std::string::npos)
        << e.what();
  }
}

TEST(PipelineStage, FindsTheLayerOfATensor) {
  EXPECT_EQ(weight_layer_index("model.layers.12.mlp.up_proj.weight"), 12);
  EXPECT_EQ(weight_layer_index("backbone.layers.3.mixer.A_log"), 3);
  EXPECT_EQ(weight_layer_index("model.language_model.layers.0.self_attn.q_proj.weight"), 0);
  EXPECT_EQ(weight_layer_index("layers.7.attention.wq.weight"), 7);
  EXPECT_EQ(weight_layer_index("model.embed_tokens.weight"), -1);
  EXPECT_EQ(weight_layer_index("model.norm.weight"), -1);
  EXPECT_EQ(weight_layer_index("lm_head.weight"), -1);
  EXPECT_EQ(weight_layer_index("model.sublayers.3.x"), -1);
  EXPECT_EQ(weight_layer_index("model.layers.x.y"), -1);
  const PipelineStage first = pipeline_stage(4, 0, 2), last = pipeline_stage(4, 1, 2);
  EXPECT_TRUE(stage_holds_tensor(first, "model.embed_tokens.weight", false));
  EXPECT_FALSE(stage_holds_tensor(last, "model.embed_tokens.weight", false));
  EXPECT_TRUE(stage_holds_tensor(last, "model.embed_tokens.weight", true));
  EXPECT_FALSE(stage_holds_tensor(first, "lm_head.weight", false));
  EXPECT_TRUE(stage_holds_tensor(last, "backbone.norm_f.weight", false));
  EXPECT_FALSE(stage_holds_tensor(first, "model.layers.2.mlp.up_proj.weight", false));
  EXPECT_TRUE(stage_holds_tensor(first, "model.layers.1.mlp.up_proj.weight", false));
}

// A stage loads its own layers (and the embedding or head where it holds them), nothing else:
// the stages' parameters add up to the whole model's, a tied embedding counted on both ends.
TEST(PipelineParallel, AStageLoadsOnlyItsLayers) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const LoadOptions llama{.model_path = fixture_path("hf/llama"), .load_format = LoadFormat::kDummy};
  const LoadedModel whole = load_model(llama, *backend);
  int64_t sum = 0;
  std::vector<int64_t> layers;
  for (int s = 0; s < 3; ++s) {
    LoadOptions options = llama;
    options.pipeline_stage = s;
    options.pipeline_parallel_size = 3;
    const LoadedModel stage = load_model(options, *backend);
    layers.push_back(stage.model->num_layers());
    sum += stage.weights->num_parameters();
    EXPECT_EQ(stage.model->parts().embed_tokens.defined(), s == 0);
    EXPECT_EQ(stage.model->parts().lm_head.defined(), s == 2);
  }
  EXPECT_EQ(layers, (std::vector<int64_t>{1, 1, 1}));
  const ModelConfig& c = whole.config;
  ASSERT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(sum, whole.weights->num_parameters());
  // Tied embeddings (qwen3): the last stage loads the embedding table as its head.
  const LoadOptions qwen3{.model_path = fixture_path("hf/qwen3"), .load_format = LoadFormat::kDummy};
  const LoadedModel tied = load_model(qwen3, *backend);
  ASSERT_TRUE(tied.config.tie_word_embeddings);
  int64_t tied_sum = 0;
  for (int s = 0; s < 2; ++s) {
    LoadOptions options = qwen3;
    options.pipeline_stage = s;
    options.pipeline_parallel_size = 2;
    tied_sum += load_model(options, *backend).weights->num_parameters();
  }
  EXPECT_EQ(tied_sum, tied.weights->num_parameters() + tied.config.vocab_size * tied.config.hidden_size);
}

// Tensor parallelism within each of 2 stages: 4 ranks, each with half the heads of half the
// layers, give one rank's logits within 1e-5 (the all-reduce adds the ranks' partial sums).
class TensorTimesPipelineFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(TensorTimesPipelineFixture, FourRanksGiveTheLogitsOfOne) {
  const Fixture f = load_fixture(GetParam());
  const FixtureSequence& seq = f.sequences.at(0);
  const SplitRun run{.tokens = seq.tokens, .prefill = seq.prompt_len, .chunk = 5};
  const LoadOptions model{.model_path = fixture_path("hf/" + GetParam())};
  const Tensor whole = run_whole(model, sequence_run(run));
  const Tensor split = run_layout(model, 2, 2, sequence_run(run));
  ASSERT_TRUE(split.defined());
  const int64_t n = static_cast<int64_t>(run.tokens.size());
  EXPECT_LT(max_abs_diff_rows(whole, split, 0, n), 1e-5f);
  EXPECT_GT(max_abs_diff_rows(whole, split, 0, n), 0.0f);  // the heads did split: sums in another order
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TensorTimesPipelineFixture,
                         ::testing::Values("llama", "qwen3", "qwen3_moe", "qwen3_next", "mamba2", "nemotron_h"));

// K sequences' steps in turn (A0, B0, C0, A1, ...): prefill chunks of 5, then one token a step;
// B reads A's tokens in reverse, each later one A's rotated. Their blocks and SSM slots come from
// the runner's memory.
class StepsInTurn {
 public:
  StepsInTurn(ModelRunner& runner, const SplitRun& run, int num_seqs)
      : runner_(runner), run_(run), tokens_(num_seqs), blocks_(num_seqs), done_(num_seqs, 0), slot_(num_seqs, -1) {
    for (int s = 0; s < num_seqs; ++s) {
      tokens_[s] = run.tokens;
      if (s == 1) std::reverse(tokens_[s].begin(), tokens_[s].end());
      if (s > 1) std::rotate(tokens_[s].begin(), tokens_[s].begin() + 3 * s, tokens_[s].end());
    }
  }
  int64_t num_steps() const {
    const auto chunks = (run_.prefill + run_.chunk - 1) / run_.chunk;
    return static_cast<int64_t>(tokens_.size()) * (chunks + static_cast<int64_t>(run_.tokens.size()) - run_.prefill);
  }
  StepBatch next() {
    const auto s = static_cast<size_t>(turn_++ % static_cast<int64_t>(tokens_.size()));
    const int32_t n = done_[s] < run_.prefill ? std::min(run_.chunk, run_.prefill - done_[s]) : 1;
    if (runner_.ssm_pool() != nullptr && slot_[s] < 0) slot_[s] = *runner_.memory().acquire_slot();
    STRATA_CHECK(runner_.memory().reserve(blocks_[s], done_[s] + n));
    StepRow row{.seq_id = static_cast<int64_t>(s),
                .token_ids = {tokens_[s].begin() + done_[s], tokens_[s].begin() + done_[s] + n},
                .num_computed_tokens = done_[s], .block_table = blocks_[s], .ssm_slot = slot_[s],
                .logits = LogitsMode::kAll};
    done_[s] += n;
    return StepBatch({std::move(row)}, runner_.block_size());
  }

 private:
  ModelRunner& runner_;
  SplitRun run_;
  std::vector<std::vector<int32_t>> tokens_, blocks_;
  std::vector<int32_t> done_, slot_;
  int64_t turn_ = 0;
};

Tensor concat_rows(const std::vector<Tensor>& parts) {
  int64_t rows = 0;
  for (const Tensor& t : parts) rows += t.dim(0);
  Tensor out = Tensor::host(DType::kF32, {rows, parts.at(0).dim(1)});
  auto* dst = static_cast<uint8_t*>(out.data());
  for (const Tensor& t : parts) dst = static_cast<uint8_t*>(std::memcpy(dst, t.data(), t.nbytes())) + t.nbytes();
  return out;
}

// One process: each step runs through. Stage 0 with micro-batches: a step starts before those
// before it are back, up to one per stage, so each stage computes one of them at once.
Tensor run_in_turn(ModelRunner& runner, const SplitRun& run, int num_seqs, bool micro_batches) {
  StepsInTurn steps(runner, run, num_seqs);
  std::vector<Tensor> logits;
  std::deque<StepBatch> started;  // keeps their rows alive
  for (int64_t i = 0; i < steps.num_steps(); ++i) {
    if (!micro_batches) {
      StepBatch batch = steps.next();
      logits.push_back(runner.execute(batch));
      continue;
    }
    if (runner.num_micro_batches() == runner.max_micro_batches()) {
      logits.push_back(runner.finish_micro_batch());
      started.pop_front();
    }
    started.push_back(steps.next());
    runner.start_micro_batch(started.back());
  }
  while (runner.num_micro_batches() > 0) logits.push_back(runner.finish_micro_batch());
  return concat_rows(logits);
}

// One micro-batch in flight per stage (hybrid: a sequence's SSM slot is taken while the others'
// steps are on later stages, and the message reaches them in order) gives one process's logits of
// the same steps: bit for bit over 2 to 4 stages, within 1e-5 over 2 x 2 ranks.
class PipelineMicroBatchFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(PipelineMicroBatchFixture, OneStepPerStageInFlightGivesTheLogitsOfOne) {
  const FixtureSequence seq = load_fixture(GetParam()).sequences.at(0);
  const SplitRun run{.tokens = seq.tokens, .prefill = seq.prompt_len, .chunk = 5};
  const LoadOptions model{.model_path = fixture_path("hf/" + GetParam())};
  std::vector<std::pair<int, int>> layouts = {{2, 2}};
  for (int stages : stage_counts(GetParam())) layouts.emplace_back(1, stages);
  for (const auto& [tp, pp] : layouts) {
    const Tensor whole = run_whole(model, [&](ModelRunner& r) { return run_in_turn(r, run, pp, false); });
    const Tensor split = run_layout(model, tp, pp, [&](ModelRunner& r) {
      EXPECT_EQ(r.max_micro_batches(), pp);
      return run_in_turn(r, run, pp, true);
    });
    ASSERT_TRUE(split.defined()) << tp << " x " << pp;
    ASSERT_EQ(split.dim(0), whole.dim(0));
    EXPECT_LE(max_abs_diff_rows(whole, split, 0, whole.dim(0)), tp > 1 ? 1e-5f : 0.0f) << tp << " x " << pp;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PipelineMicroBatchFixture,
                         ::testing::Values("llama", "qwen3_moe", "qwen3_next", "mamba2"));

// Stage 0's runner hands out the SSM slots: a hybrid whose stage 0 holds only attention is refused,
// while the same model over 2 stages (stage 0: attention and a Gated DeltaNet layer) runs.
TEST(PipelineParallel, RefusesAHybridWhoseFirstStageHasNoRecurrentLayer) {
  const nlohmann::json types = {{"layer_types", {"full_attention", "linear_attention", "linear_attention",
                                                 "linear_attention"}}};
  const LoadOptions model = changed_fixture("qwen3_next", "qwen3_next_attention_first", types);
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  LoadOptions four = model;
  four.pipeline_stage = 1;
  four.pipeline_parallel_size = 4;
  try {
    load_model(four, *backend);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline stage 0 (layers 0 to 0) would hold no recurrent layer"),
              std::string::npos) << e.what();
  }
  SplitRun run{.prefill = 20, .chunk = 6};
  for (int32_t i = 0; i < 28; ++i) run.tokens.push_back((i * 37 + 11) % 200);
  expect_stages_equal_one(model, run, {2});
}

}  // namespace
}  // namespace strata::test
