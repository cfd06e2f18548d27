// Many requests through the serving Engine at once, each gathered whole and returned in
// the order given: the offline batch API (the Python module's LLM.generate) on the
// continuous-batching path. Every request is submitted before any is read, so they share steps.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "strata/engine/engine.h"

namespace strata {

struct ChoiceOutput {
  std::string text;                    // stop strings never appear
  std::vector<int32_t> token_ids;
  std::vector<SampleResult> logprobs;  // one per token when the request asked for logprobs
  FinishReason finish_reason = FinishReason::kNone;
  std::optional<std::string> stop_reason;  // the stop string or token that ended it
};

struct RequestOutput {
  std::vector<ChoiceOutput> choices;  // n of them, by choice index
  std::vector<PromptLogprob> prompt_logprobs;
  std::vector<float> pooled;      // a pooling request's embedding or scores
  int32_t num_prompt_tokens = 0;
  int32_t num_cached_tokens = 0;  // prompt tokens the prefix cache served
  std::string error;              // set when the engine failed the request
  bool finished = false;

  // Folds one update of the request's stream in.
  void add(const RequestUpdate& update);
};

struct BatchGenerateOptions {
  // Polled about every 100 ms while waiting; true cancels every request and throws an Error
  // (the Python module checks for Ctrl-C here).
  std::function<bool()> interrupted;
};

// Throws strata::Error naming the request (by its index) when the engine refuses one (nothing
// of the batch keeps running then) or fails one.
std::vector<RequestOutput> generate_batch(Engine& engine, std::vector<GenerationRequest> requests,
                                          const BatchGenerateOptions& options = {});

}  // namespace strata
