// GBNF grammars (llama.cpp's syntax, which vLLM and llama.cpp servers take as "grammar"):
// `name ::= body` rules with `root` as the start; bodies of alternatives (|), sequences,
// groups, * + ? {m} {m,} {m,n}, "string literals", [character classes] with ranges and ^
// negation, '.', escapes (\n \r \t \\ \" \[ \] \xHH \uHHHH \UHHHHHHHH), # comments.
// Layout is free: a rule runs until the next `name ::=`.
#pragma once

#include <memory>
#include <string_view>

#include "strata/engine/grammar.h"

namespace strata {

// Throws strata::Error naming the line, the column and what is wrong: a syntax error, an
// undefined or twice-defined rule, no root, left recursion, a root with no finite string.
std::shared_ptr<const CompiledGrammar> compile_gbnf(std::string_view text);

}  // namespace strata
