// Token logprobs in the two shapes OpenAI uses: chat's {"content": [{token, logprob, bytes,
// top_logprobs}]} and legacy completions' {tokens, token_logprobs, top_logprobs, text_offset}.
// A token's text is its own decode (special tokens included).
#pragma once

#include <span>

#include "strata/engine/sampler.h"
#include "strata/server/json_fields.h"
#include "strata/server/served_model.h"

namespace strata::server {

std::string token_text(const ServedModel& model, int32_t token_id);

// {"content": [...]} for chat choices and chunks.
Json chat_logprobs_json(const ServedModel& model, std::span<const SampleResult> tokens);

// Completions' object; text offsets count from `text_offset` (the choice's text so far).
Json completion_logprobs_json(const ServedModel& model, std::span<const SampleResult> tokens, int64_t text_offset);

}  // namespace strata::server
