#include "engine/engine_test_support.h"

#include <gtest/gtest.h>

namespace strata::test {

std::vector<ChoiceResult> collect_choices(RequestStream& stream, int32_t n, int timeout_ms) {
  std::vector<ChoiceResult> r(n);
  while (auto update = stream.pop(std::chrono::milliseconds(timeout_ms))) {
    for (const ChoiceDelta& d : update->deltas) {
      ChoiceResult& c = r[d.index];
      c.tokens.insert(c.tokens.end(), d.token_ids.begin(), d.token_ids.end());
      c.logprobs.insert(c.logprobs.end(), d.logprobs.begin(), d.logprobs.end());
      c.text += d.text;
      if (d.finish_reason != FinishReason::kNone) c.finish = d.finish_reason;
    }
    if (update->finished) return r;
  }
  ADD_FAILURE() << "request timed out";
  return r;
}

std::vector<int32_t> engine_prompt(int32_t seed, int32_t len) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < len; ++i) ids.push_back((seed * 131 + i * 17) % 500 + 3);
  return ids;
}

}  // namespace strata::test
