// Statement half of the parser: text, output, and the block tags chat templates use
// (if, for, set, macro, call, filter, break, continue, generation).
#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/text/jinja/parser.h"

namespace strata::jinja {
namespace {

template <typename T>
std::unique_ptr<T> stmt(StmtKind kind, const Token& at) {
  return std::make_unique<T>(kind, at.line, at.column);
}

std::string quoted_list(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : " or '") + n + "'";
  return out;
}

}  // namespace

Body parse_source(const std::string& source, const LexOptions& options) {
  return Parser(lex(source, options)).parse_template();
}

Body Parser::parse_template() { return parse_body({}, ""); }

// Parses until `{% <one of stops> ...`, leaving the stop tag's name as the current token.
Body Parser::parse_body(const std::set<std::string>& stops, const std::string& open_tag) {
  Body body;
  while (true) {
    const Token t = cur();
    switch (t.type) {
      case TokenType::kEof:
        if (!stops.empty()) {
          error_at(t, fmt::format("unexpected end of template: the '{}' block needs {}", open_tag,
                                  quoted_list(stops)));
        }
        return body;
      case TokenType::kText: {
        auto text = stmt<TextStmt>(StmtKind::kText, t);
        text->text = take().text;
        body.push_back(std::move(text));
        break;
      }
      case TokenType::kVarBegin: {
        take();
        auto out = stmt<OutputStmt>(StmtKind::kOutput, t);
        out->expr = parse_tuple(true);
        if (cur().type != TokenType::kVarEnd) error_at(cur(), "expected '}}'");
        take();
        body.push_back(std::move(out));
        break;
      }
      case TokenType::kBlockBegin: {
        const Token& name = peek();
        if (name.type == TokenType::kName && stops.count(name.text)) {
          take();
          return body;
        }
        body.push_back(parse_statement());
        break;
      }
      default: error_at(t, "unexpected token '" + t.text + "'");
    }
  }
}

void Parser::expect_block_end() {
  if (cur().type != TokenType::kBlockEnd) {
    error_at(cur(), "expected '%}', found '" + cur().text + "'");
  }
  take();
}

void Parser::end_tag(const std::string& name) {
  if (!is_name(name.c_str())) error_at(cur(), "expected '" + name + "'");
  take();
  expect_block_end();
}

StmtPtr Parser::parse_statement() {
  take();  // {%
  const Token t = cur();
  if (t.type != TokenType::kName) error_at(t, "expected a tag name after '{%'");
  take();
  const std::string& n = t.text;
  if (n == "if") return parse_if(t);
  if (n == "for") return parse_for(t);
  if (n == "set") return parse_set(t);
  if (n == "macro") return parse_macro(t);
  if (n == "call") return parse_call_block(t);
  if (n == "filter") return parse_filter_block(t);
  if (n == "break" || n == "continue") {
    if (loop_depth_ == 0) error_at(t, "'" + n + "' outside of a for loop");
    expect_block_end();
    return stmt<Stmt>(n == "break" ? StmtKind::kBreak : StmtKind::kContinue, t);
  }
  if (n == "generation") {
    expect_block_end();
    auto scope = stmt<ScopeStmt>(StmtKind::kScope, t);
    scope->body = parse_body({"endgeneration"}, n);
    end_tag("endgeneration");
    return scope;
  }
  error_at(t, "unknown tag '" + n + "'");
}

StmtPtr Parser::parse_if(const Token& start) {
  auto node = stmt<IfStmt>(StmtKind::kIf, start);
  while (true) {
    ExprPtr cond = parse_tuple(false);
    expect_block_end();
    Body body = parse_body({"elif", "else", "endif"}, "if");
    node->branches.emplace_back(std::move(cond), std::move(body));
    const std::string tag = take().text;
    if (tag == "elif") continue;
    if (tag == "else") {
      expect_block_end();
      node->else_body = parse_body({"endif"}, "if");
      take();
    }
    expect_block_end();
    return node;
  }
}

StmtPtr Parser::parse_for(const Token& start) {
  auto node = stmt<ForStmt>(StmtKind::kFor, start);
  node->target = parse_assign_target(false);
  if (!is_name("in")) error_at(cur(), "expected 'in' in a for loop");
  take();
  node->iter = parse_tuple(false, {"recursive", "if"});
  if (is_name("if")) {
    take();
    node->filter = parse_expression();
  }
  if (is_name("recursive")) error_at(cur(), "recursive for loops are not supported");
  expect_block_end();
  ++loop_depth_;
  node->body = parse_body({"endfor", "else"}, "for");
  --loop_depth_;
  if (take().text == "else") {
    expect_block_end();
    node->else_body = parse_body({"endfor"}, "for");
    take();
  }
  expect_block_end();
  return node;
}

Target Parser::parse_assign_target(bool allow_attr) {
  auto one = [&]() -> Target {
    Target t;
    if (is_op("(")) {
      take();
      Target inner = parse_assign_target(false);
      expect_op(")");
      return inner;
    }
    t.name = expect_name();
    if (allow_attr && is_op(".")) {
      take();
      t.attr = expect_name();
    }
    return t;
  };
  Target first = one();
  if (!is_op(",")) return first;
  Target tuple;
  tuple.is_tuple = true;
  tuple.items.push_back(std::move(first));
  while (is_op(",")) {
    take();
    if (is_op("=") || is_name("in") || is_op(")")) break;
    tuple.items.push_back(one());
  }
  for (const Target& item : tuple.items) {
    if (!item.attr.empty()) error_at(cur(), "cannot unpack into an attribute");
  }
  return tuple;
}

StmtPtr Parser::parse_set(const Token& start) {
  Target target = parse_assign_target(true);
  if (is_op("=")) {
    take();
    auto node = stmt<SetStmt>(StmtKind::kSet, start);
    node->target = std::move(target);
    node->value = parse_tuple(true);
    expect_block_end();
    return node;
  }
  auto node = stmt<SetBlockStmt>(StmtKind::kSetBlock, start);
  node->target = std::move(target);
  expect_block_end();
  node->body = parse_body({"endset"}, "set");
  take();
  expect_block_end();
  return node;
}

void Parser::parse_macro_signature(MacroStmt& macro) {
  expect_op("(");
  while (!is_op(")")) {
    if (!macro.params.empty()) {
      expect_op(",");
      if (is_op(")")) break;
    }
    macro.params.push_back(expect_name());
    if (is_op("=")) {
      take();
      macro.defaults.push_back(parse_expression());
    } else {
      if (!macro.defaults.empty() && macro.defaults.back()) {
        error_at(cur(), "a parameter without a default follows one with a default");
      }
      macro.defaults.push_back(nullptr);
    }
  }
  take();
}

StmtPtr Parser::parse_macro(const Token& start) {
  auto node = stmt<MacroStmt>(StmtKind::kMacro, start);
  node->name = expect_name();
  parse_macro_signature(*node);
  expect_block_end();
  const int outer_loop_depth = loop_depth_;
  loop_depth_ = 0;  // a macro body cannot break the caller's loop
  node->body = parse_body({"endmacro"}, "macro");
  loop_depth_ = outer_loop_depth;
  take();
  expect_block_end();
  return node;
}

StmtPtr Parser::parse_call_block(const Token& start) {
  auto node = std::make_unique<CallBlockStmt>(StmtKind::kCallBlock, start.line, start.column);
  node->caller.name = "caller";
  if (is_op("(")) parse_macro_signature(node->caller);
  node->call = parse_expression();
  if (node->call->kind != ExprKind::kCall) error_at(start, "'call' needs a macro call");
  expect_block_end();
  node->caller.body = parse_body({"endcall"}, "call");
  take();
  expect_block_end();
  return node;
}

StmtPtr Parser::parse_filter_block(const Token& start) {
  auto node = stmt<FilterBlockStmt>(StmtKind::kFilterBlock, start);
  node->filters.push_back(parse_filter(nullptr));
  while (is_op("|")) {
    take();
    node->filters.push_back(parse_filter(nullptr));
  }
  expect_block_end();
  node->body = parse_body({"endfilter"}, "filter");
  take();
  expect_block_end();
  return node;
}

}  // namespace strata::jinja
