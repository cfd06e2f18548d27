// MTP speculation under tensor parallelism on the CPU: 2 ranks (threads with the shared-memory
// communicator) hold their parts of the Qwen3-Next (untied) and Qwen3.5 (tied) MTP fixtures; rank 0
// runs the engine and the checkpoint's MTP module whole (load_mtp_module), and the target's verify
// steps reach both ranks. Greedy tokens equal one rank's plain decoding, drafts are kept (qwen3_5_mtp)
// and rejected, and their counts equal one rank's MTP speculation's: a module read from rank 0's
// shard (half the heads and vocabulary) would draft other tokens, or none.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include "engine/speculation_test_support.h"
#include "parallel/rank_threads_support.h"
#include "strata/engine/rank_worker.h"
#include "strata/model/model_loader.h"
#include "strata/parallel/communicator.h"
#include "strata/parallel/step_message.h"
#include "strata/text/id_tokenizer.h"
#include "test_support.h"

namespace strata::test {
namespace {

constexpr int kWorld = 2;

struct SpeculationRun {
  SpeculationResults results;
  EngineStatsSnapshot stats;
};

struct RunSpec {
  int world = 1;            // ranks the target splits over
  int32_t num_drafts = 0;   // 0: plain decoding
};

// Rank 0's engine over `runner` (with the module when drafting) runs `requests` as one wave.
SpeculationRun run_engine(ModelRunner& runner, ModelRunner* module, const std::vector<GenerationRequest>& requests,
                          int32_t num_drafts) {
  const std::unique_ptr<text::Tokenizer> tokenizer =
      text::make_id_tokenizer(static_cast<int32_t>(runner.model().config().vocab_size));
  EngineOptions options{.max_num_batched_tokens = 64};
  if (num_drafts > 0) options.speculative = {.num_speculative_tokens = num_drafts, .method = SpeculativeMethod::kMtp};
  CheckedEngine engine(runner, *tokenizer, {}, options, num_drafts > 0 ? module : nullptr);
  SpeculationRun out{.results = run_waves(engine, {requests})[0]};
  engine.shutdown(std::chrono::seconds(5));
  out.stats = engine.stats();
  return out;
}

// Each rank loads its part of `fixture`; rank 0 also the MTP module, whole.
SpeculationRun run_ranks(const std::string& fixture, const std::vector<GenerationRequest>& requests,
                         const RunSpec& spec) {
  SpeculationRun out;
  const std::string group = fmt::format("strata-test-mtp-tp-{}-{}", getpid(),
                                        per_test_name(fmt::format("{}-{}", spec.world, spec.num_drafts)));
  run_rank_threads(spec.world, [&](int rank) {
    std::unique_ptr<Communicator> comm;
    if (spec.world > 1)
      comm = make_shared_memory_communicator(
          {.rank = rank, .world_size = spec.world, .group_name = group, .timeout = std::chrono::seconds(60)});
    std::unique_ptr<Backend> backend = make_cpu_backend(1);
    const LoadedModel target =
        load_model({.model_path = fixture_path("hf/" + fixture), .shard = {.rank = rank, .size = spec.world}}, *backend);
    ModelRunner runner(*target.model, *backend, {.num_kv_blocks = 256, .num_ssm_slots = 48, .tensor_parallel = comm.get()});
    if (rank > 0) return serve_first_rank(runner, *comm);
    const LoadedModel module = load_mtp_module(target);
    ModelRunner module_runner(*module.model, *backend, {.num_kv_blocks = 256});
    out = run_engine(runner, &module_runner, requests, spec.num_drafts);
    if (comm) send_to_ranks(*comm, {.kind = RankMessage::Kind::kStop});
  });
  return out;
}

class MtpTensorParallel : public ::testing::TestWithParam<std::string> {};

TEST_P(MtpTensorParallel, SplitTargetKeepsTheTokensAndDraftsOfOneRank) {
  const std::vector<GenerationRequest> requests = speculation_greedy_requests(3);
  const SpeculationRun plain = run_ranks(GetParam(), requests, {});
  for (int32_t num_drafts : {1, 3}) {
    const SpeculationRun one = run_ranks(GetParam(), requests, {.num_drafts = num_drafts});
    const SpeculationRun split = run_ranks(GetParam(), requests, {.world = kWorld, .num_drafts = num_drafts});
    const std::string what = fmt::format("{} drafts over {} ranks", num_drafts, kWorld);
    expect_same_results(split.results, plain.results, what);
    // qwen3_next_mtp's module is another random model's layer: the target keeps none of its drafts.
    if (GetParam() == "qwen3_5_mtp") EXPECT_GT(split.stats.spec_accepted_tokens_total, 0u) << what << ": some kept";
    EXPECT_GT(split.stats.spec_draft_tokens_total, split.stats.spec_accepted_tokens_total) << what << ": some rejected";
    EXPECT_EQ(split.stats.spec_draft_tokens_total, one.stats.spec_draft_tokens_total) << what;
    EXPECT_EQ(split.stats.spec_accepted_tokens_total, one.stats.spec_accepted_tokens_total) << what;
    EXPECT_EQ(split.stats.spec_accepted_per_pos_total, one.stats.spec_accepted_per_pos_total) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, MtpTensorParallel, ::testing::Values("qwen3_next_mtp", "qwen3_5_mtp"));

}  // namespace
}  // namespace strata::test
