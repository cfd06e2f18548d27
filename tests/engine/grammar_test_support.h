// What the regex and grammar tests ask of a compiled grammar: does it accept a whole
// string, and how many bytes of a string can it take before refusing one.
#pragma once

#include <string_view>

#include "strata/engine/grammar_state.h"

namespace strata::test {

inline size_t accepted_prefix(const CompiledGrammar& grammar, std::string_view text) {
  GrammarState state(&grammar);
  size_t i = 0;
  while (i < text.size() && state.feed(static_cast<unsigned char>(text[i]))) ++i;
  return i;
}

inline bool full_match(const CompiledGrammar& grammar, std::string_view text) {
  GrammarState state(&grammar);
  return state.feed(text) && state.can_end();
}

}  // namespace strata::test
