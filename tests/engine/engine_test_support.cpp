#include "engine/engine_test_support.h"

#include <gtest/gtest.h>

namespace strata::test {

std::vector<ChoiceResult> collect_choices(RequestStream& stream, int32_t n, int timeout_ms) {
  std::vector<ChoiceResult> r(n);
  while (auto update = stream.pop(std::chrono::milliseconds(timeout_ms))) {
    for (const ChoiceDelta& d : update->deltas) {
      ChoiceResult& c = r[d.index];
      c.tokens.insert(c.tokens.end(), d.token_ids.begin(), d.token_ids.end());
      c.logprobs.insert(c.logprobs.end(), d.logprobs.begin(), d.logprobs.end());
      c.text += d.text;
      if (d.finish_reason != FinishReason::kNone) c.finish = d.finish_reason;
    }
    if (update->finished) return r;
  }
  ADD_FAILURE() << "request timed out";
  return r;
}

std::vector<std::vector<ChoiceResult>> run_concurrently(CheckedEngine& engine,
                                                        const std::vector<GenerationRequest>& requests) {
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (const GenerationRequest& r : requests) streams.push_back(engine.submit(r));
  std::vector<std::vector<ChoiceResult>> results;
  for (size_t i = 0; i < requests.size(); ++i) results.push_back(collect_choices(*streams[i], requests[i].n));
  return results;
}

std::vector<int32_t> engine_prompt(int32_t seed, int32_t len) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < len; ++i) ids.push_back((seed * 131 + i * 17) % 500 + 3);
  return ids;
}

void expect_pools_idle(ModelRunner& runner) {
  EXPECT_EQ(runner.block_pool().num_free(), runner.block_pool().num_blocks()) << "KV blocks leaked";
  if (runner.ssm_pool() == nullptr) return;
  EXPECT_EQ(runner.ssm_pool()->num_free(), runner.ssm_pool()->capacity()) << "SSM slots leaked";
  EXPECT_EQ(runner.verify_states()->num_in_use(), 0) << "verify state buffers leaked";
}

CheckedEngine::CheckedEngine(ModelRunner& runner, const text::Tokenizer& tokenizer,
                             std::vector<int32_t> eos_token_ids, const EngineOptions& options,
                             ModelRunner* draft_runner)
    : runner_(runner), draft_runner_(draft_runner),
      engine_(std::make_unique<Engine>(runner, tokenizer, std::move(eos_token_ids), options, draft_runner)) {}

CheckedEngine::~CheckedEngine() {
  engine_->shutdown(std::chrono::seconds(10));
  // Every finished sequence gave its draft state back while the engine still stands.
  if (draft_runner_ != nullptr) expect_pools_idle(*draft_runner_);
  engine_.reset();
  expect_pools_idle(runner_);
}

}  // namespace strata::test
