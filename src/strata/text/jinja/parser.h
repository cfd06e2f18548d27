// Turns lexer tokens into the statement tree of ast.h, following jinja2's grammar and
// operator precedence (filters and `is` tests bind tighter than arithmetic; `**` is left
// associative as in jinja2). Syntax errors are strata::Error with the template line and column.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "strata/text/jinja/ast.h"
#include "strata/text/jinja/lexer.h"

namespace strata::jinja {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}
  Body parse_template();

 private:
  // Statements (parser_stmt.cpp).
  Body parse_body(const std::set<std::string>& stops, const std::string& open_tag);
  StmtPtr parse_statement();
  StmtPtr parse_if(const Token& start);
  StmtPtr parse_for(const Token& start);
  StmtPtr parse_set(const Token& start);
  StmtPtr parse_macro(const Token& start);
  StmtPtr parse_call_block(const Token& start);
  StmtPtr parse_filter_block(const Token& start);
  void parse_macro_signature(MacroStmt& macro);
  Target parse_assign_target(bool allow_attr);
  void end_tag(const std::string& name);  // consumes `{% name %}`

  // Expressions (parser_expr.cpp).
  ExprPtr parse_tuple(bool with_condexpr, const std::set<std::string>& end_names = {});
  ExprPtr parse_expression(bool with_condexpr = true);
  ExprPtr parse_condexpr();
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  ExprPtr parse_sequence(const Token& start, const char* close, bool is_tuple);
  ExprPtr parse_dict(const Token& start);
  ExprPtr parse_postfix(ExprPtr node);
  ExprPtr parse_subscript(ExprPtr node, const Token& start);
  ExprPtr parse_filter_expr(ExprPtr node);
  ExprPtr parse_filter(ExprPtr node);
  ExprPtr parse_test(ExprPtr node, const Token& start);
  Arguments parse_call_args();

  // Token stream.
  const Token& cur() const { return tokens_[pos_]; }
  const Token& peek(size_t n = 1) const;
  Token take();
  bool is_op(const char* op) const;
  bool is_name(const char* name) const;
  void expect_op(const char* op);
  std::string expect_name();
  void expect_block_end();
  [[noreturn]] void error_at(const Token& token, const std::string& what) const;

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;  // for bodies being parsed; break/continue need one
};

// Convenience: lex and parse a template source.
Body parse_source(const std::string& source, const LexOptions& options = {});

}  // namespace strata::jinja
