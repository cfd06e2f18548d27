// GenerationRun: one HTTP request's work on the engine: one engine request per prompt
// (each with n choices), read together. Choice c of prompt p has the response index
// p * n + c. Destroying a run cancels whatever has not finished, so a client that goes away
// (or a handler that throws) never leaves sequences holding KV blocks.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "strata/engine/request.h"
#include "strata/server/generation_service.h"

namespace strata::server {

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
};

class GenerationRun {
 public:
  // Submits every request; a refused one (strata::Error) cancels the others and becomes a 400.
  // At most kMaxSequencesPerRequest sequences (prompts x n): the request readers refuse more.
  GenerationRun(GenerationService& service, std::vector<GenerationRequest> requests);
  ~GenerationRun();
  GenerationRun(const GenerationRun&) = delete;
  GenerationRun& operator=(const GenerationRun&) = delete;

  using DeltaFn = std::function<void(int32_t choice_index, ChoiceDelta& delta)>;
  // Waits up to `timeout` for updates and hands each delta to on_delta. False once every
  // request has finished (all deltas delivered).
  bool poll(std::chrono::milliseconds timeout, const DeltaFn& on_delta);
  void cancel();

  int32_t num_choices() const { return static_cast<int32_t>(streams_.size()) * n_; }
  int32_t choices_per_prompt() const { return n_; }
  const std::vector<int32_t>& prompt_ids(size_t prompt) const { return prompts_[prompt]; }
  // Prompt logprobs of positions 1.. of prompt `prompt` (when its request asked), as they arrived.
  const std::vector<PromptLogprob>& prompt_logprobs(size_t prompt) const { return progress_[prompt].prompt_logprobs; }
  Usage usage() const;
  const std::string& error() const { return error_; }  // the first engine error, if any

 private:
  struct Progress {
    bool finished = false;
    int64_t num_prompt_tokens = 0, num_cached_tokens = 0, num_generated_tokens = 0;
    std::vector<PromptLogprob> prompt_logprobs;
  };
  bool take(size_t i, std::chrono::milliseconds timeout, const DeltaFn& on_delta);

  GenerationService& service_;
  int32_t n_ = 1;
  std::vector<std::vector<int32_t>> prompts_;
  std::vector<std::shared_ptr<RequestStream>> streams_;
  std::vector<Progress> progress_;
  std::string error_;
};

struct Envelope;

// The end of a finished streamed run: an error event if the engine failed, the usage chunk
// when asked (`object`: "chat.completion.chunk" or "text_completion"), then [DONE].
std::string stream_end(const GenerationRun& run, const Envelope& envelope, const char* object,
                       bool include_usage);

}  // namespace strata::server
