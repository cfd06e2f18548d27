// The sampling and stopping fields chat and completions share (temperature, top_p, top_k,
// min_p, penalties, logit_bias, seed, stop, n, max_tokens, ignore_eos, priority), read into a
// GenerationRequest, and the context-length check both endpoints apply to a prompt.
#pragma once

#include <vector>

#include "strata/engine/request.h"
#include "strata/server/json_fields.h"

namespace strata::server {

struct GenerationFields {
  GenerationRequest request;     // prompt_ids still empty
  bool max_tokens_given = false;
};

// A 400 naming the field for a wrong type or range.
GenerationFields read_generation_fields(const Json& body, int64_t vocab_size);

struct ContextFit {
  int32_t max_model_len = 0;
  int32_t default_max_tokens = 0;  // when the client gave none; 0: the rest of the context
  const char* prompt_field = "prompt";
};

// Returns `request` with prompt_ids set and max_tokens fitted: a 400 when the prompt is
// empty or over the context, or when prompt + an explicit max_tokens is over it.
GenerationRequest fit_to_context(const GenerationFields& fields, std::vector<int32_t> prompt_ids,
                                 const ContextFit& fit);

}  // namespace strata::server
