// --speculative-config, in vLLM's JSON form: {"method": "ngram", "num_speculative_tokens": 3,
// "prompt_lookup_max": 4, "prompt_lookup_min": 2}.
#pragma once

#include <string_view>

#include "strata/engine/ngram_proposer.h"

namespace strata {

// Throws strata::Error naming the bad key or value.
NgramOptions parse_speculative_config(std::string_view json);

}  // namespace strata
