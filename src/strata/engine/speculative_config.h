// --speculative-config, in vLLM's JSON form: n-gram drafts {"method": "ngram",
// "num_speculative_tokens": 3, "prompt_lookup_max": 4, "prompt_lookup_min": 2}, or a draft
// model {"model": PATH, "num_speculative_tokens": 3} (optionally "method": "draft_model"), or
// the target checkpoint's multi-token-prediction layers {"method": "mtp", "num_speculative_tokens":
// 1} ("qwen3_next_mtp", vLLM's older name, is the same).
#pragma once

#include <string>
#include <string_view>

#include "strata/engine/ngram_proposer.h"

namespace strata {

enum class SpeculativeMethod : uint8_t { kNgram, kDraftModel, kMtp };

struct SpeculativeOptions {
  int32_t num_speculative_tokens = 0;  // drafts per step; 0: speculative decoding off
  int32_t prompt_lookup_min = 2;       // n-gram only
  int32_t prompt_lookup_max = 4;
  SpeculativeMethod method = SpeculativeMethod::kNgram;
  std::string draft_model;  // kDraftModel: a path or repo id with the target's vocabulary
  // Benchmarks only, never read from JSON: each draft of a greedy request is replaced by
  // another token with this probability, so a model as its own draft accepts a draft at
  // 1 - this rate (tokens/s against a controlled acceptance).
  double draft_corruption = 0;

  bool uses_draft_model() const { return num_speculative_tokens > 0 && method == SpeculativeMethod::kDraftModel; }
  bool uses_mtp() const { return num_speculative_tokens > 0 && method == SpeculativeMethod::kMtp; }
  // A second runner proposes: the draft model's, or the MTP module's.
  bool uses_draft_runner() const { return uses_draft_model() || uses_mtp(); }
  NgramOptions ngram() const {
    return {.num_speculative_tokens = num_speculative_tokens, .prompt_lookup_min = prompt_lookup_min,
            .prompt_lookup_max = prompt_lookup_max};
  }
};

// Throws strata::Error naming the bad key or value.
SpeculativeOptions parse_speculative_config(std::string_view json);

}  // namespace strata
