// Regular expressions (the subset structured output uses: literals, classes with ranges and
// negation, '.', '|', groups, * + ? {m} {m,} {m,n}, escapes \d \w \s \D \W \S \n \t \xHH
// \uHHHH) and choice lists, compiled to a CompiledGrammar that GrammarState runs as an
// automaton. The match is always of the whole output: a leading ^ and trailing $ are
// allowed and change nothing. Backreferences, lookaround and inner anchors are refused.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/engine/grammar.h"

namespace strata {

// Throws strata::Error naming the position and what is wrong; `what` prefixes messages.
std::shared_ptr<const CompiledGrammar> compile_regex(std::string_view pattern, const std::string& what = "regex");

// Exactly one of `choices` (non-empty, each a non-empty string).
std::shared_ptr<const CompiledGrammar> compile_choice(const std::vector<std::string>& choices);

}  // namespace strata
