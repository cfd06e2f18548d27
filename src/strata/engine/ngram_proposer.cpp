#include "strata/engine/ngram_proposer.h"

#include <algorithm>

namespace strata {

std::vector<int32_t> propose_ngram_drafts(std::span<const int32_t> tokens, const NgramOptions& options,
                                          int32_t max_drafts) {
  const int64_t len = static_cast<int64_t>(tokens.size());
  const int64_t want = std::min(options.num_speculative_tokens, max_drafts);
  if (want <= 0) return {};
  for (int64_t n = std::min<int64_t>(options.prompt_lookup_max, len - 1); n >= options.prompt_lookup_min; --n) {
    const std::span<const int32_t> suffix = tokens.subspan(len - n);
    // The most recent earlier start whose n tokens equal the suffix (it must leave a token to propose).
    for (int64_t start = len - n - 1; start >= 0; --start) {
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + start)) continue;
      const int64_t from = start + n, count = std::min<int64_t>(want, len - from);
      return {tokens.begin() + from, tokens.begin() + from + count};
    }
  }
  return {};
}

}  // namespace strata
