// N-gram (prompt lookup) drafts for speculative decoding: the tokens that followed the most
// recent earlier occurrence of the sequence's last n tokens, for the longest n in
// [min_n, max_n] that occurs. No draft model: repetitive outputs (code edits, quoting the
// prompt, structured text) get several tokens per step, the rest lose nothing but the
// verify work.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace strata {

struct NgramOptions {
  int32_t num_speculative_tokens = 0;  // drafts per step; 0: speculative decoding off
  int32_t prompt_lookup_min = 2;
  int32_t prompt_lookup_max = 4;
};

// Up to options.num_speculative_tokens drafts to follow `tokens`; empty when no n-gram matches.
std::vector<int32_t> propose_ngram_drafts(std::span<const int32_t> tokens, const NgramOptions& options,
                                          int32_t max_drafts);

}  // namespace strata
