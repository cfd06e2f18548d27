// A generation request as the engine sees it (already tokenized), and what flows back:
// per-step deltas of each choice through a RequestStream the caller reads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "strata/engine/prompt_logprobs.h"
#include "strata/engine/sampler.h"
#include "strata/engine/grammar.h"
#include "strata/engine/json_schema_grammar.h"
#include "strata/engine/sampling_params.h"
#include "strata/model/multimodal_prompt.h"

namespace strata {

struct ToolCallFormat;

inline constexpr int32_t kMaxChoices = 128;               // n of one engine request
inline constexpr int32_t kMaxSequencesPerRequest = 256;  // prompts x n of one API request

// A pooling model's request: the prompt runs as prefill only (chunked like any prompt),
// nothing is sampled, and the answer is one vector (RequestUpdate::pooled).
struct PoolingRequest {
  int32_t dimensions = 0;  // > 0: keep the first `dimensions` values (matryoshka), then normalise
};

struct GenerationRequest {
  std::vector<int32_t> prompt_ids;
  SamplingParams sampling;
  int32_t max_tokens = 16;
  std::vector<std::string> stop;         // stop strings: generation ends before them
  std::vector<int32_t> stop_token_ids;   // besides the model's eos ids
  bool ignore_eos = false;
  bool skip_special_tokens = true;
  int32_t n = 1;                         // choices sharing the prompt's KV blocks
  int32_t priority = 0;                  // lower runs first; FCFS within a priority
  uint64_t cache_key = 0;                // prefix-cache namespace (adapter, cache salt)
  int32_t lora_slot = -1;                // the runner's LoRA adapter; -1: the base model
  bool json_object = false;              // constrain the output to one JSON object, then stop
  std::shared_ptr<const CompiledSchema> json_schema;  // or to this schema (implies json_object)
  std::shared_ptr<const ToolCallFormat> tool_calls;   // or to tool calls in this format (forced)
  std::shared_ptr<const CompiledGrammar> grammar;     // or to this regex, choice or grammar
  // >= 0: logprobs of the prompt's tokens with this many top tokens each; such a request
  // skips the prefix cache (a cached prefix has no logits). -1: none.
  int32_t prompt_logprobs = -1;
  std::optional<PoolingRequest> pooling;  // set: pool the prompt (pooling models only)
  // The prompt's images: their placeholder tokens' embeddings and MRoPE positions. The engine
  // keys the prefix cache by their content too, so other images never share these blocks.
  std::shared_ptr<const MultimodalPrompt> images;
  // Each prompt token's segment, as the tokenizer's pair template gives it (cross-encoders);
  // null: all 0. Dropped for models without token type embeddings.
  std::shared_ptr<const std::vector<int32_t>> token_type_ids;
};

// kCancelled: the client cancelled it or the server shut down before it ended ("abort", as
// vLLM names it); kError: the engine failed it (the server answers 500, RequestUpdate::error).
enum class FinishReason : uint8_t { kNone, kStop, kLength, kCancelled, kError };
const char* finish_reason_name(FinishReason reason);  // "stop", "length", "abort", "error"

struct ChoiceDelta {
  int32_t index = 0;                     // choice index, 0..n-1
  std::string text;                      // new text (stop strings never appear)
  std::vector<int32_t> token_ids;        // new tokens
  std::vector<SampleResult> logprobs;    // per new token, when asked
  FinishReason finish_reason = FinishReason::kNone;
  std::optional<std::string> stop_reason;  // the stop string or token that ended it
};

struct RequestUpdate {
  std::vector<ChoiceDelta> deltas;
  std::vector<PromptLogprob> prompt_logprobs;  // of prompt positions 1.., in order, each once
  std::vector<float> pooled;             // a pooling request's answer, with its last update
  bool finished = false;                 // every choice has finished
  std::string error;                     // set with finished when the request failed
  int32_t num_prompt_tokens = 0;
  int32_t num_cached_tokens = 0;         // prompt tokens served by the prefix cache
  int32_t num_generated_tokens = 0;      // all choices, so far
};

// Single producer (the engine thread), single consumer (an HTTP thread).
class RequestStream {
 public:
  explicit RequestStream(int64_t request_id) : request_id_(request_id) {}
  int64_t request_id() const { return request_id_; }

  void push(RequestUpdate update);
  // Waits up to `timeout` for updates; merges all queued ones. nullopt on timeout.
  std::optional<RequestUpdate> pop(std::chrono::milliseconds timeout);
  bool finished() const;

 private:
  int64_t request_id_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<RequestUpdate> queue_;
  bool finished_ = false;
};

}  // namespace strata
