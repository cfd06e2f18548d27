// Prompt logprobs of one logits row, on the host (only requests that ask pay for the copy).
#include "strata/engine/prompt_logprobs.h"

#include <algorithm>
#include <numeric>

#include "strata/core/error.h"

namespace strata {

PromptLogprob prompt_logprob(std::span<const float> logits, int32_t token_id, int32_t num_top) {
  STRATA_CHECK(token_id >= 0 && static_cast<size_t>(token_id) < logits.size());
  std::vector<float> logprobs(logits.size());
  log_softmax(logits, logprobs);
  PromptLogprob result{.token_id = token_id, .logprob = logprobs[token_id]};
  for (float lp : logprobs) result.rank += lp > result.logprob ? 1 : 0;
  const int32_t k = std::min<int32_t>(num_top, static_cast<int32_t>(logprobs.size()));
  if (k <= 0) return result;
  std::vector<int32_t> ids(logprobs.size());
  std::iota(ids.begin(), ids.end(), 0);
  // Ties go to the lower id, so the order does not depend on the sort.
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](int32_t a, int32_t b) {
    return logprobs[a] != logprobs[b] ? logprobs[a] > logprobs[b] : a < b;
  });
  for (int32_t j = 0; j < k; ++j) result.top.push_back({ids[j], logprobs[ids[j]]});
  return result;
}

std::vector<PromptLogprob> row_prompt_logprobs(const PromptLogprobsRow& row) {
  const int32_t c = row.num_computed_tokens;
  const int32_t q_len = static_cast<int32_t>(static_cast<int64_t>(row.logits.size()) / row.vocab);
  const int32_t last = std::min(c + q_len, static_cast<int32_t>(row.prompt_ids.size()) - 1);
  STRATA_CHECK(row.num_done >= c);  // chunks arrive in order and never skip a position
  std::vector<PromptLogprob> entries;
  for (int32_t p = row.num_done + 1; p <= last; ++p)
    entries.push_back(prompt_logprob(row.logits.subspan(static_cast<size_t>((p - 1 - c) * row.vocab), row.vocab),
                                     row.prompt_ids[p], row.num_top));
  return entries;
}

}  // namespace strata
