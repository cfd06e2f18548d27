#include "strata/engine/draft_token.h"

#include "strata/engine/rejection_sampler.h"
#include "strata/engine/sampling_distribution.h"

namespace strata {

void append_draft_token(Sequence& seq, std::span<const float> logits) {
  const SamplingParams& params = seq.sampler->params();
  std::vector<int32_t> output(seq.token_ids.begin() + seq.num_prompt_tokens, seq.token_ids.end());
  output.insert(output.end(), seq.draft_tokens.begin(), seq.draft_tokens.end());
  std::vector<double> q = sampling_distribution(
      params, {.logits = logits,
               .prompt_ids = std::span<const int32_t>(seq.token_ids).first(seq.num_prompt_tokens),
               .output_ids = output});
  // Greedy: q is one-hot and the draw takes its token without spending a random number.
  seq.draft_tokens.push_back(draw_from(q, params.greedy() ? 0.0 : seq.sampler->next_uniform()));
  if (!params.greedy()) seq.draft_probs.push_back(std::move(q));
}

}  // namespace strata
