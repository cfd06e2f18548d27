// LoRA adapters under tensor and pipeline parallelism on the CPU: each rank (a thread with its own
// backend and the shared-memory communicators) holds its part of both PEFT adapters, and one step
// mixing the base model and both adapters gives one rank's logits: within 1e-5 at 2 and 4
// tensor-parallel ranks (the o and down deltas join the partial sums before the all-reduce), bit
// for bit over 2 and 3 pipeline stages (each stage holds its own layers' stacks), on the llama
// and qwen3 fixtures; the same when rank 0 loads them by path after the start (LLM(enable_lora))
// and the other ranks follow its messages, and a rank that cannot follow fails the group.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <functional>

#include <fmt/format.h>

#include "lora/lora_test_support.h"
#include "model/fixture_support.h"
#include "parallel/rank_threads_support.h"
#include "strata/engine/direct_session.h"
#include "strata/engine/rank_worker.h"
#include "strata/backend/device_error.h"
#include "strata/lora/lora_set.h"
#include "strata/lora/lora_slot_cache.h"
#include "strata/parallel/communicator.h"
#include "strata/parallel/parallel_group.h"
#include "strata/parallel/step_message.h"
#include "test_support.h"

namespace strata::test {
namespace {

const char* kAdapters[] = {"all_r8", "attn_r4"};
const int32_t kSlots[] = {-1, 0, 1};  // the base model, then each adapter

std::vector<LoraAdapter> adapters_of(const std::string& base) {
  std::vector<LoraAdapter> adapters;
  for (const char* name : kAdapters)
    adapters.push_back(load_lora_adapter(name, fixture_path("lora/" + base + "/adapter_" + name)));
  return adapters;
}

// One step holding three copies of a 12-token prompt, one per slot, then two decode steps of all
// three: each step's last-token logits, [3 steps * 3 rows, vocab]. Rows differ only by adapter.
Tensor mixed_steps(ModelRunner& runner) {
  DirectSession session(runner);
  std::vector<int64_t> ids;
  std::vector<StepInput> prefill;
  std::vector<int32_t> prompt;
  for (int32_t i = 0; i < 12; ++i) prompt.push_back((i * 37 + 11) % 200);
  for (int32_t slot : kSlots) {
    ids.push_back(session.add_sequence());
    prefill.push_back({.seq_id = ids.back(), .token_ids = prompt, .lora_slot = slot});
  }
  const int64_t vocab = runner.model().config().vocab_size;
  Tensor out = Tensor::host(DType::kF32, {9, vocab});
  auto keep = [&](const std::vector<Tensor>& rows, int64_t step) {
    for (int64_t r = 0; r < 3; ++r)
      std::memcpy(out.data_as<float>() + (step * 3 + r) * vocab, rows[r].data(), rows[r].nbytes());
  };
  keep(session.step(prefill), 0);
  for (int64_t step = 1; step < 3; ++step) {
    std::vector<StepInput> decode;
    for (int r = 0; r < 3; ++r)
      decode.push_back({.seq_id = ids[r], .token_ids = {static_cast<int32_t>(7 * step)}, .lora_slot = kSlots[r]});
    keep(session.step(decode), step);
  }
  return out;
}

// Both adapters in every rank's part from the start (strata serve --lora-modules), or empty
// slots that rank 0 fills by path afterwards (LLM(enable_lora=True)) and the others follow.
enum class Loading { kAtStart, kByPath };

std::unique_ptr<LoraSet> rank_adapters(Loading loading, const std::string& base, const ModelConfig& config,
                                       Backend& backend, const LoraPlacement& placement) {
  if (loading == Loading::kAtStart) return std::make_unique<LoraSet>(adapters_of(base), config, backend, placement);
  return std::make_unique<LoraSet>(LoraCapacity{.max_loras = 2, .max_lora_rank = 8}, config, backend, placement);
}

// Rank 0 of kByPath: four loads that reuse both slots, ending with the slots of adapters_of.
void fill_slots_by_path(LoraSet& set, ModelRunner& runner, const std::string& base) {
  LoraSlotCache cache(set, [&runner](int32_t slot, const LoraRequest& lora) {
    runner.repeat_lora_load(slot, lora.name, lora.path);
  });
  auto request = [&base](const std::string& name, int64_t id) {
    return std::optional<LoraRequest>({.name = name, .id = id, .path = fixture_path("lora/" + base + "/adapter_" + name)});
  };
  EXPECT_EQ(cache.slots_for({request("attn_r4", 2)}), std::vector<int32_t>{0});
  EXPECT_EQ(cache.slots_for({request("all_r8", 1)}), std::vector<int32_t>{1});
  EXPECT_EQ(cache.slots_for({request("all_r8", 3)}), std::vector<int32_t>{0});
  EXPECT_EQ(cache.slots_for({request("all_r8", 3), request("attn_r4", 4)}), (std::vector<int32_t>{0, 1}));
}

Tensor run_split(const std::string& base, int world, Loading loading = Loading::kAtStart) {
  Tensor logits;
  const std::string group = fmt::format("strata-test-lora-tp-{}-{}", getpid(), per_test_name(std::to_string(world)));
  run_rank_threads(world, [&](int rank) {
    std::unique_ptr<Communicator> comm = make_shared_memory_communicator(
        {.rank = rank, .world_size = world, .group_name = group, .timeout = std::chrono::seconds(60)});
    std::unique_ptr<Backend> backend = make_cpu_backend(1);
    const TensorShard shard{.rank = rank, .size = world};
    LoadedModel loaded = load_model({.model_path = f32_config_copy(base), .shard = shard}, *backend);
    const std::unique_ptr<LoraSet> lora = rank_adapters(loading, base, loaded.config, *backend, {.shard = shard});
    ModelRunner runner(*loaded.model, *backend, {.num_kv_blocks = 64, .tensor_parallel = comm.get()});
    runner.set_lora(lora.get());
    if (rank > 0) return serve_first_rank(runner, *comm, lora.get());
    if (loading == Loading::kByPath) fill_slots_by_path(*lora, runner, base);
    logits = mixed_steps(runner);
    send_to_ranks(*comm, {.kind = RankMessage::Kind::kStop});
  });
  return logits;
}

using RankZeroRun = std::function<Tensor(ModelRunner&, LoraSet&)>;

// The model over `stages` pipeline stages (threads), each with the adapters' stacks of its layers.
// on_rank0: what rank 0 runs instead of mixed_steps (after no loads).
Tensor run_stages(const std::string& base, int stages, Loading loading = Loading::kAtStart,
                  const RankZeroRun& on_rank0 = {}) {
  Tensor logits;
  const std::string group = fmt::format("strata-test-lora-pp-{}-{}", getpid(), per_test_name(std::to_string(stages)));
  const std::chrono::milliseconds timeout = std::chrono::seconds(60);
  run_rank_threads(stages, [&](int stage) {
    std::unique_ptr<Communicator> control = make_shared_memory_communicator(
        {.rank = stage, .world_size = stages, .group_name = group + ".control", .timeout = timeout});
    const OpenLinks open = open_pipeline_links({.rank = stage, .world_size = stages, .group_name = group + ".stages",
                                                .timeout = timeout}, make_shared_memory_communicator);
    const PipelineLinks links = open.links();
    std::unique_ptr<Backend> backend = make_cpu_backend(1);
    LoadedModel loaded = load_model(
        {.model_path = f32_config_copy(base), .pipeline_stage = stage, .pipeline_parallel_size = stages}, *backend);
    const std::unique_ptr<LoraSet> lora =
        rank_adapters(loading, base, loaded.config, *backend, {.stage = loaded.model->pipeline_stage()});
    ModelRunner runner(*loaded.model, *backend, {.num_kv_blocks = 64, .rank_control = control.get(), .pipeline = &links});
    runner.set_lora(lora.get());
    if (stage > 0) return serve_first_rank(runner, *control, lora.get());
    if (on_rank0) {
      logits = on_rank0(runner, *lora);
    } else {
      if (loading == Loading::kByPath) fill_slots_by_path(*lora, runner, base);
      logits = mixed_steps(runner);
    }
    send_to_ranks(*control, {.kind = RankMessage::Kind::kStop});
  });
  return logits;
}

class LoraTensorParallel : public ::testing::TestWithParam<std::string> {};

// One process's mixed steps with both adapters.
Tensor one_process(const std::string& base) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const LoadedModel loaded = load_model({.model_path = f32_config_copy(base)}, *backend);
  const LoraSet lora(adapters_of(base), loaded.config, *backend);
  ModelRunner runner(*loaded.model, *backend, {.num_kv_blocks = 64});
  runner.set_lora(&lora);
  Tensor whole = mixed_steps(runner);
  // The adapters change every row's logits, so a rank that dropped its part would show.
  EXPECT_GT(max_abs_diff_rows(whole.slice_rows(0, 1), whole.slice_rows(1, 2), 0, 1), 1e-2f);
  EXPECT_GT(max_abs_diff_rows(whole.slice_rows(0, 1), whole.slice_rows(2, 3), 0, 1), 1e-2f);
  return whole;
}

TEST_P(LoraTensorParallel, SplitAdaptersGiveTheLogitsOfOneRank) {
  const Tensor whole = one_process(GetParam());
  float largest = 1.0f;
  for (int64_t i = 0; i < whole.numel(); ++i) largest = std::max(largest, std::fabs(whole.data_as<float>()[i]));
  for (int world : {2, 4}) {
    const Tensor split = run_split(GetParam(), world);
    ASSERT_TRUE(split.defined());
    EXPECT_LT(max_abs_diff_rows(whole, split, 0, 9), 1e-5f * largest) << world << " ranks";
  }
}

INSTANTIATE_TEST_SUITE_P(Bases, LoraTensorParallel, ::testing::Values("llama", "qwen3"));

class LoraPipelineParallel : public ::testing::TestWithParam<std::string> {};

// Taking the adapters off the later stages fails this by about 2 in the logits.
TEST_P(LoraPipelineParallel, StagesGiveTheLogitsOfOneProcessBitForBit) {
  const Tensor whole = one_process(GetParam());
  for (int stages : {2, 3}) {  // both fixtures have at least 3 layers
    const Tensor split = run_stages(GetParam(), stages);
    ASSERT_TRUE(split.defined());
    EXPECT_EQ(max_abs_diff_rows(whole, split, 0, 9), 0.0f) << stages << " stages";
  }
}

INSTANTIATE_TEST_SUITE_P(Bases, LoraPipelineParallel, ::testing::Values("llama", "qwen3"));

// Skipping kLoadLora on the other ranks leaves their slots empty and fails both by far more.
TEST(LoraLoadedByPath, OtherRanksFollowRankZerosLoads) {
  const Tensor whole = one_process("qwen3");
  const Tensor split = run_split("qwen3", 2, Loading::kByPath);
  ASSERT_TRUE(split.defined());
  EXPECT_LT(max_abs_diff_rows(whole, split, 0, 9), 1e-4f);
  const Tensor stages = run_stages("qwen3", 2, Loading::kByPath);
  ASSERT_TRUE(stages.defined());
  EXPECT_EQ(max_abs_diff_rows(whole, stages, 0, 9), 0.0f);
}

// Three 12-token prompts, the third on LoRA slot 0; `load` runs before the third starts. Stage 0
// of a pipeline starts the three as micro-batches (two in flight when `load` runs), one process
// runs each through. Their last-token logits, [3, vocab].
Tensor prompts_around_a_load(ModelRunner& runner, const std::function<void()>& load) {
  std::vector<std::vector<int32_t>> blocks(3);
  std::vector<StepBatch> steps;
  for (int32_t i = 0; i < 3; ++i) {
    std::vector<int32_t> prompt;
    for (int32_t t = 0; t < 12; ++t) prompt.push_back((t * 31 + 7 * i + 5) % 200);
    EXPECT_TRUE(runner.memory().reserve(blocks[i], 12));
    steps.emplace_back(std::vector<StepRow>{{.seq_id = i, .token_ids = prompt, .block_table = blocks[i],
                                             .lora_slot = i == 2 ? 0 : -1}},
                       runner.block_size());
  }
  const bool micro_batches = runner.max_micro_batches() > 1;
  std::vector<Tensor> logits;
  for (int32_t i = 0; i < 3; ++i) {
    if (i == 2) load();
    if (micro_batches) runner.start_micro_batch(steps[i]);
    else logits.push_back(runner.execute(steps[i]));
  }
  while (micro_batches && runner.num_micro_batches() > 0) logits.push_back(runner.finish_micro_batch());
  const int64_t vocab = runner.model().config().vocab_size;
  Tensor out = Tensor::host(DType::kF32, {3, vocab});
  for (int64_t r = 0; r < 3; ++r) std::memcpy(out.data_as<float>() + r * vocab, logits[r].data(), logits[r].nbytes());
  return out;
}

// A load by path while micro-batches are in flight: stage 0 first takes their logits (the ranks
// agree on a load between steps); sending it at once leaves the later stages waiting on stage 0.
TEST(LoraLoadedByPath, ALoadWhileMicroBatchesAreInFlightWaitsForThem) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const LoadedModel loaded = load_model({.model_path = f32_config_copy("qwen3")}, *backend);
  const LoraSet adapters(adapters_of("qwen3"), loaded.config, *backend);  // slot 0: all_r8
  ModelRunner one(*loaded.model, *backend, {.num_kv_blocks = 64});
  one.set_lora(&adapters);
  const Tensor whole = prompts_around_a_load(one, [] {});
  const std::string path = fixture_path("lora/qwen3/adapter_all_r8");
  const Tensor stages = run_stages("qwen3", 3, Loading::kByPath, [&](ModelRunner& runner, LoraSet& lora) {
    EXPECT_EQ(runner.max_micro_batches(), 3);
    return prompts_around_a_load(runner, [&] {
      EXPECT_EQ(runner.num_micro_batches(), 2);
      lora.load(0, load_lora_adapter("all_r8", path));
      runner.repeat_lora_load(0, "all_r8", path);
    });
  });
  ASSERT_TRUE(stages.defined());
  EXPECT_EQ(max_abs_diff_rows(whole, stages, 0, 3), 0.0f);
  EXPECT_GT(max_abs_diff_rows(whole.slice_rows(0, 1), whole.slice_rows(2, 3), 0, 1), 0.0f);
}

// A rank without slots (or one whose load fails) stops with its error, and rank 0's next step
// throws it as a lost group rather than running on different weights.
TEST(LoraLoadedByPath, ARankThatCannotLoadFailsTheGroup) {
  const std::string group = fmt::format("strata-test-lora-fail-{}", getpid());
  const std::string expected = "rank 1 could not load LoRA adapter 'attn_r4'";
  run_rank_threads(2, [&](int rank) {
    std::unique_ptr<Communicator> comm = make_shared_memory_communicator(
        {.rank = rank, .world_size = 2, .group_name = group, .timeout = std::chrono::seconds(60)});
    std::unique_ptr<Backend> backend = make_cpu_backend(1);
    const TensorShard shard{.rank = rank, .size = 2};
    LoadedModel loaded = load_model({.model_path = f32_config_copy("qwen3"), .shard = shard}, *backend);
    const std::unique_ptr<LoraSet> lora = rank_adapters(Loading::kByPath, "qwen3", loaded.config, *backend, {.shard = shard});
    ModelRunner runner(*loaded.model, *backend, {.num_kv_blocks = 64, .tensor_parallel = comm.get()});
    runner.set_lora(lora.get());
    try {
      if (rank > 0) return serve_first_rank(runner, *comm, /*lora=*/nullptr);
      fill_slots_by_path(*lora, runner, "qwen3");
      mixed_steps(runner);
      ADD_FAILURE() << "rank " << rank << " ran on";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("started without LoRA slots"), std::string::npos) << e.what();
      if (rank == 0) EXPECT_NE(dynamic_cast<const DeviceError*>(&e), nullptr) << "not a lost group: " << e.what();
    }
  });
}

}  // namespace
}  // namespace strata::test
