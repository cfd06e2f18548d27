// Helpers of the engine tests: deterministic prompts, everything a stream delivers gathered
// per choice, and CheckedEngine, through which every engine test runs its Engine: when it
// goes away it checks that every KV block, SSM slot and verify buffer is back in its pool
// (the draft model's too).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "strata/engine/engine.h"
#include "strata/engine/request.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"
#include "test_support.h"

namespace strata::test {

// The qwen3 fixture on two CPU threads with an id tokenizer: the model most engine tests serve.
struct EngineFixture {
  std::unique_ptr<Backend> backend = make_cpu_backend(2);
  LoadedModel loaded = load_model({.model_path = fixture_path("hf/qwen3")}, *backend);
  std::unique_ptr<text::Tokenizer> tokenizer = text::make_id_tokenizer(512);
};

struct ChoiceResult {
  std::vector<int32_t> tokens;
  std::string text;
  FinishReason finish = FinishReason::kNone;
  std::vector<SampleResult> logprobs;
};

// Reads the stream until the request finishes (a test failure after `timeout_ms` of silence).
std::vector<ChoiceResult> collect_choices(RequestStream& stream, int32_t n, int timeout_ms = 120000);

class CheckedEngine;
// Submits every request at once, then reads each one's choices to the end.
std::vector<std::vector<ChoiceResult>> run_concurrently(CheckedEngine& engine,
                                                        const std::vector<GenerationRequest>& requests);

// `len` token ids in [3, 503), different for each seed.
std::vector<int32_t> engine_prompt(int32_t seed, int32_t len);

// Exact counts of an idle runner whose engine is gone: every block free (cached blocks are
// free blocks), every SSM slot free, no verify buffer held by a slot.
void expect_pools_idle(ModelRunner& runner);

// An Engine (same constructor) that shuts down and checks expect_pools_idle when destroyed.
class CheckedEngine {
 public:
  CheckedEngine(ModelRunner& runner, const text::Tokenizer& tokenizer, std::vector<int32_t> eos_token_ids,
                const EngineOptions& options, ModelRunner* draft_runner = nullptr);
  ~CheckedEngine();
  CheckedEngine(const CheckedEngine&) = delete;
  CheckedEngine& operator=(const CheckedEngine&) = delete;

  std::shared_ptr<RequestStream> submit(GenerationRequest request) { return engine_->submit(std::move(request)); }
  void cancel(int64_t request_id) { engine_->cancel(request_id); }
  void shutdown(std::chrono::milliseconds deadline) { engine_->shutdown(deadline); }
  EngineStatsSnapshot stats() const { return engine_->stats(); }
  bool async_scheduling() const { return engine_->async_scheduling(); }
  int32_t max_model_len() const { return engine_->max_model_len(); }
  std::optional<std::string> fatal_error() const { return engine_->fatal_error(); }
  bool running() const { return engine_->running(); }
  Engine& engine() { return *engine_; }  // for helpers that drive an Engine (the bench workloads)

 private:
  ModelRunner& runner_;
  ModelRunner* draft_runner_;  // checked too: the draft model's blocks and slots
  std::unique_ptr<Engine> engine_;
};

}  // namespace strata::test
