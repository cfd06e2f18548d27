// A /v1/completions body: the prompts (a string, an array of strings, an array of token ids,
// or an array of such arrays; each prompt gets its own n choices), echo, logprobs, and the
// generation fields. `suffix` (fill-in-the-middle) is refused: no served model supports it;
// `best_of` only equal to n (nothing is ranked).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "strata/server/generation_fields.h"
#include "strata/server/json_fields.h"

namespace strata::server {

// Text to tokenize, or token ids as given.
using PromptInput = std::variant<std::string, std::vector<int32_t>>;

struct CompletionRequest {
  std::vector<PromptInput> prompts;
  GenerationFields fields;
  bool stream = false;
  bool include_usage = false;
  bool echo = false;
  bool return_token_ids = false;  // vLLM's extension: prompt and choice token ids in the reply
  int32_t prompt_logprobs = -1;   // vLLM's extension as asked (the engine's count may be larger, for echo)
};

// A 400 naming the field for anything malformed.
CompletionRequest read_completion_request(const Json& body, int64_t vocab_size);

// The "prompt" field alone (also used by /tokenize).
std::vector<PromptInput> read_prompts(const Json& prompt, int64_t vocab_size);

}  // namespace strata::server
