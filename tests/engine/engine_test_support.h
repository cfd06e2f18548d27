// Helpers of the engine tests: deterministic prompts and everything a stream delivers,
// gathered per choice.
#pragma once

#include <string>
#include <vector>

#include "strata/engine/request.h"

namespace strata::test {

struct ChoiceResult {
  std::vector<int32_t> tokens;
  std::string text;
  FinishReason finish = FinishReason::kNone;
  std::vector<SampleResult> logprobs;
};

// Reads the stream until the request finishes (a test failure after `timeout_ms` of silence).
std::vector<ChoiceResult> collect_choices(RequestStream& stream, int32_t n, int timeout_ms = 120000);

// `len` token ids in [3, 503), different for each seed.
std::vector<int32_t> engine_prompt(int32_t seed, int32_t len);

}  // namespace strata::test
