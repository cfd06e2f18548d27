// Prompt logprobs in the two shapes clients read: vLLM's `prompt_logprobs` (null for the
// first token, then {token id: {logprob, rank, decoded_token}} per position, the prompt's
// token and the top ones) and the legacy completions' echo (the prompt's tokens ahead of
// the generated ones in {tokens, token_logprobs, top_logprobs, text_offset}, null first).
#pragma once

#include <span>
#include <vector>

#include "strata/engine/prompt_logprobs.h"
#include "strata/server/json_fields.h"
#include "strata/server/served_model.h"

namespace strata::server {

// entries: positions 1.. of the prompt; num_top: how many of each entry's top to show.
Json vllm_prompt_logprobs_json(const ServedModel& model, std::span<const PromptLogprob> entries, int32_t num_top);

// The prompt's part of an echoed choice's logprobs, prepended to `generated` (the completion
// object of the generated tokens, its offsets counted from the end of the prompt's text).
struct EchoLogprobs {
  std::span<const int32_t> prompt_ids;
  std::span<const PromptLogprob> entries;  // positions 1.. of prompt_ids
  int32_t num_top = 0;
};
Json echo_logprobs_json(const ServedModel& model, const EchoLogprobs& echo, Json generated);

}  // namespace strata::server
