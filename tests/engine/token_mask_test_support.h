// The check every token-mask test makes: at a grammar state, the mask allows exactly the
// non-special tokens whose text the grammar takes (brute force over the vocabulary).
// Header-only so the *_test.cpp glob needs no extra sources.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "strata/engine/json_token_mask.h"
#include "strata/text/tokenizer.h"

namespace strata::test {

// Returns how many tokens the mask allows.
template <typename Grammar>
int64_t expect_mask_is_brute_force(const text::Tokenizer& tokenizer, const JsonTokenMask& mask, const Grammar& state,
                                   std::string_view where) {
  const std::vector<uint32_t> bits = mask.allowed(state);
  int64_t count = 0;
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    Grammar t = state;
    const bool ok = !tokenizer.is_special(id) && !mask.token_text(id).empty() && t.feed(mask.token_text(id));
    const bool allowed = ((bits[id / 32] >> (id % 32)) & 1u) != 0;
    EXPECT_EQ(allowed, ok) << where << " token " << id;
    if (allowed != ok) return count;  // one failure says enough
    count += ok;
  }
  return count;
}

}  // namespace strata::test
