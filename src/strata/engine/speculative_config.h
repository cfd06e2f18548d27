// --speculative-config, in vLLM's JSON form: n-gram drafts {"method": "ngram",
// "num_speculative_tokens": 3, "prompt_lookup_max": 4, "prompt_lookup_min": 2}, or a draft
// model {"model": PATH, "num_speculative_tokens": 3} (optionally "method": "draft_model"), or
// the target checkpoint's multi-token-prediction layers {"method": "mtp", "num_speculative_tokens":
// 1} ("qwen3_next_mtp", vLLM's older name, is the same), or an EAGLE-3 head {"method": "eagle3",
// "model": HEAD_PATH, "num_speculative_tokens": 3}.
#pragma once

#include <string>
#include <string_view>

#include "strata/engine/ngram_proposer.h"

namespace strata {

enum class SpeculativeMethod : uint8_t { kNgram, kDraftModel, kMtp, kEagle3 };

struct SpeculativeOptions {
  int32_t num_speculative_tokens = 0;  // drafts per step; 0: speculative decoding off
  int32_t prompt_lookup_min = 2;       // n-gram only
  int32_t prompt_lookup_max = 4;
  SpeculativeMethod method = SpeculativeMethod::kNgram;
  std::string draft_model;  // kDraftModel: a path or repo id with the target's vocabulary; kEagle3: the head's
  // Benchmarks only, never read from JSON: each draft of a greedy request is replaced by
  // another token with this probability, so a model as its own draft accepts a draft at
  // 1 - this rate (tokens/s against a controlled acceptance).
  double draft_corruption = 0;

  bool uses_draft_model() const { return num_speculative_tokens > 0 && method == SpeculativeMethod::kDraftModel; }
  bool uses_mtp() const { return num_speculative_tokens > 0 && method == SpeculativeMethod::kMtp; }
  bool uses_eagle3() const { return num_speculative_tokens > 0 && method == SpeculativeMethod::kEagle3; }
  // A module fed the target's hidden states proposes (MtpProposer): the MTP module or an EAGLE-3 head.
  bool uses_hidden_state_proposer() const { return uses_mtp() || uses_eagle3(); }
  // A second runner proposes: the draft model's, the MTP module's or the EAGLE-3 head's.
  bool uses_draft_runner() const { return uses_draft_model() || uses_hidden_state_proposer(); }
  NgramOptions ngram() const {
    return {.num_speculative_tokens = num_speculative_tokens, .prompt_lookup_min = prompt_lookup_min,
            .prompt_lookup_max = prompt_lookup_max};
  }
};

// Throws strata::Error naming the bad key or value.
SpeculativeOptions parse_speculative_config(std::string_view json);

}  // namespace strata
