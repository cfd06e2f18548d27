// Splits a Jinja template into text and tag tokens the way jinja2's lexer does, including
// whitespace control (`{%-`, `-%}`, `+%}`), trim_blocks, lstrip_blocks, newline normalisation
// and dropping one trailing newline. Raw blocks come out as plain text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::jinja {

enum class TokenType {
  kText, kVarBegin, kVarEnd, kBlockBegin, kBlockEnd, kName, kString, kInt, kFloat, kOp, kEof
};

struct Token {
  TokenType type;
  std::string text;  // text, name, operator, or the decoded string literal
  int line = 1;
  int column = 1;
  int64_t int_value = 0;
  double float_value = 0.0;
};

// transformers renders chat templates with trim_blocks and lstrip_blocks on.
struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
  bool keep_trailing_newline = false;
};

// Throws strata::Error naming the line and column of a malformed tag or literal.
std::vector<Token> lex(const std::string& source, const LexOptions& options = {});

}  // namespace strata::jinja
