// What the pooling routes (embeddings, score, rerank, classify) share: reading their inputs
// (text or token ids), tokenizing them, and PoolingRun, one engine request per input submitted
// together (so they share steps) and read back whole. Destroying a run cancels what has not
// finished, so a client that leaves never keeps sequences running.
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "strata/server/http_reply.h"
#include "strata/server/json_fields.h"
#include "strata/server/served_model.h"

namespace strata::server {

inline constexpr size_t kMaxPoolingInputs = 2048;  // OpenAI's limit on embedding inputs

using PoolingInput = std::variant<std::string, std::vector<int32_t>>;  // text or token ids

// `value`: a string, an array of strings, an array of token ids or an array of token-id arrays;
// a 400 naming `field` for anything else, an empty array or more than kMaxPoolingInputs.
std::vector<PoolingInput> read_pooling_inputs(const Json& value, const char* field, int64_t vocab_size);
// The `input` field of an embeddings or classify body, after checking that `model` names the base
// model (adapters serve generation only).
std::vector<PoolingInput> read_body_inputs(const ServedModel& model, const Json& body);
// The body's truncate_prompt_tokens (vLLM's: -1 the model's limit, k >= 1 k tokens) as the most
// tokens an input keeps; 0: absent or null, no truncation. A 400 for a bad value.
int64_t read_truncation(const ServedModel& model, const Json& body);
// Token ids of one input (`name` in messages: "input[2]"), cut to max_tokens when > 0 (text keeps
// its special tokens and loses its end, ids keep their last max_tokens); a 400 for an empty one,
// or for text when the model has no tokenizer.
std::vector<int32_t> tokenize_input(const ServedModel& model, const PoolingInput& input, bool add_special_tokens,
                                    const std::string& name, int64_t max_tokens = 0);
// A pooling request for the engine.
GenerationRequest pooling_request(std::vector<int32_t> prompt_ids, int32_t dimensions = 0);

class PoolingRun {
 public:
  // Submits every request; one the engine refuses cancels the others and becomes a 400 that
  // names it by `names[i]` ("input[2]") when there are several.
  PoolingRun(GenerationService& service, std::vector<GenerationRequest> requests, const std::vector<std::string>& names);
  ~PoolingRun();
  PoolingRun(const PoolingRun&) = delete;
  PoolingRun& operator=(const PoolingRun&) = delete;

  // Every request's vector, in order; empty when the client left (everything is cancelled then).
  // A 500 when the engine failed one.
  std::vector<std::vector<float>> collect(const ClientWatch& client);
  int64_t num_prompt_tokens() const { return num_prompt_tokens_; }

 private:
  void cancel();

  GenerationService& service_;
  std::vector<std::shared_ptr<RequestStream>> streams_;
  std::vector<bool> finished_;
  int64_t num_prompt_tokens_ = 0;
};

// {"prompt_tokens": n, "total_tokens": n, "completion_tokens": 0} as vLLM's pooling routes answer.
Json pooling_usage_json(int64_t num_prompt_tokens);

}  // namespace strata::server
