// Prompt logprobs: for each prompt position p >= 1, how likely the model found the prompt's
// token p after tokens 0..p-1 (logits row of position p-1), its rank, and the top-k there.
// Logprobs are under the raw model distribution, as the sampler reports generated ones.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "strata/engine/sampler.h"

namespace strata {

inline constexpr int32_t kMaxPromptLogprobs = 20;  // vLLM's default max_logprobs

struct PromptLogprob {
  int32_t token_id = 0;              // the prompt's token at this position
  float logprob = 0.0f;
  int32_t rank = 1;                  // 1 + the number of tokens more likely than it
  std::vector<TokenLogprob> top;     // num_top most likely tokens, most likely first
};

// logits: [vocab] f32, the row of the position before token_id's.
PromptLogprob prompt_logprob(std::span<const float> logits, int32_t token_id, int32_t num_top);

// One prefill row's logits on the host; row j predicts the token at num_computed_tokens + j + 1.
struct PromptLogprobsRow {
  std::span<const float> logits;        // [q_len * vocab] f32
  int64_t vocab = 0;
  std::span<const int32_t> prompt_ids;  // the whole prompt
  int32_t num_computed_tokens = 0;      // position of the row's first token
  int32_t num_done = 0;                 // prompt positions 1..num_done already given
  int32_t num_top = 0;
};

// The entries of positions past num_done that the row covers, in order.
std::vector<PromptLogprob> row_prompt_logprobs(const PromptLogprobsRow& row);

}  // namespace strata
