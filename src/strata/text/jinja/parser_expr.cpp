// Expression half of the parser: jinja2's precedence ladder from conditional expressions down
// to primaries, postfix access, filters and tests.
#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/text/jinja/parser.h"

namespace strata::jinja {
namespace {

constexpr int kMaxExpressionDepth = 200;

template <typename T>
std::unique_ptr<T> node(ExprKind kind, const Token& at) {
  return std::make_unique<T>(kind, at.line, at.column);
}

std::string describe(const Token& t) {
  switch (t.type) {
    case TokenType::kEof: return "end of template";
    case TokenType::kVarEnd: return "'}}'";
    case TokenType::kBlockEnd: return "'%}'";
    case TokenType::kText: return "template text";
    case TokenType::kString: return "string literal";
    case TokenType::kVarBegin: return "'{{'";
    case TokenType::kBlockBegin: return "'{%'";
    default: return "'" + t.text + "'";
  }
}

}  // namespace

const Token& Parser::peek(size_t n) const {
  return tokens_[std::min(pos_ + n, tokens_.size() - 1)];
}

Token Parser::take() {
  Token t = tokens_[pos_];
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return t;
}

bool Parser::is_op(const char* op) const { return cur().type == TokenType::kOp && cur().text == op; }
bool Parser::is_name(const char* name) const {
  return cur().type == TokenType::kName && cur().text == name;
}

void Parser::expect_op(const char* op) {
  if (!is_op(op)) error_at(cur(), fmt::format("expected '{}', found {}", op, describe(cur())));
  take();
}

std::string Parser::expect_name() {
  if (cur().type != TokenType::kName) error_at(cur(), "expected a name, found " + describe(cur()));
  return take().text;
}

void Parser::error_at(const Token& token, const std::string& what) const {
  fail("template line {}, column {}: syntax error: {}", token.line, token.column, what);
}

ExprPtr Parser::parse_tuple(bool with_condexpr, const std::set<std::string>& end_names) {
  const Token start = cur();
  std::vector<ExprPtr> items;
  bool saw_comma = false;
  auto at_end = [&] {
    const Token& t = cur();
    return t.type == TokenType::kVarEnd || t.type == TokenType::kBlockEnd || is_op(")") ||
           (t.type == TokenType::kName && end_names.count(t.text));
  };
  while (true) {
    if (!items.empty()) {
      if (!is_op(",")) break;
      take();
      saw_comma = true;
      if (at_end()) break;
    }
    items.push_back(parse_expression(with_condexpr));
  }
  if (items.size() == 1 && !saw_comma) return std::move(items[0]);
  auto tuple = node<ListExpr>(ExprKind::kList, start);
  tuple->items = std::move(items);
  tuple->is_tuple = true;
  return tuple;
}

ExprPtr Parser::parse_expression(bool with_condexpr) {
  return with_condexpr ? parse_condexpr() : parse_or();
}

ExprPtr Parser::parse_condexpr() {
  ExprPtr expr = parse_or();
  while (is_name("if")) {
    const Token at = take();
    auto cond = node<CondExpr>(ExprKind::kCond, at);
    cond->then_expr = std::move(expr);
    cond->cond = parse_or();
    if (is_name("else")) {
      take();
      cond->else_expr = parse_condexpr();
    }
    expr = std::move(cond);
  }
  return expr;
}

static ExprPtr binary(const Token& at, std::string op, ExprPtr left, ExprPtr right) {
  auto b = node<BinaryExpr>(ExprKind::kBinary, at);
  b->op = std::move(op);
  b->left = std::move(left);
  b->right = std::move(right);
  return b;
}

ExprPtr Parser::parse_or() {
  ExprPtr left = parse_and();
  while (is_name("or")) {
    const Token at = take();
    left = binary(at, "or", std::move(left), parse_and());
  }
  return left;
}

ExprPtr Parser::parse_and() {
  ExprPtr left = parse_not();
  while (is_name("and")) {
    const Token at = take();
    left = binary(at, "and", std::move(left), parse_not());
  }
  return left;
}

ExprPtr Parser::parse_not() {
  if (!is_name("not")) return parse_compare();
  const Token at = take();
  auto u = node<UnaryExpr>(ExprKind::kUnary, at);
  u->op = "not";
  u->operand = parse_not();
  return u;
}

ExprPtr Parser::parse_compare() {
  const Token start = cur();
  ExprPtr first = parse_math1();
  std::vector<std::pair<std::string, ExprPtr>> rest;
  while (true) {
    if (cur().type == TokenType::kOp &&
        (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == ">" ||
         cur().text == "<=" || cur().text == ">=")) {
      std::string op = take().text;
      rest.emplace_back(std::move(op), parse_math1());
    } else if (is_name("in")) {
      take();
      rest.emplace_back("in", parse_math1());
    } else if (is_name("not") && peek().type == TokenType::kName && peek().text == "in") {
      take();
      take();
      rest.emplace_back("not in", parse_math1());
    } else {
      break;
    }
  }
  if (rest.empty()) return first;
  auto c = node<CompareExpr>(ExprKind::kCompare, start);
  c->first = std::move(first);
  c->rest = std::move(rest);
  return c;
}

ExprPtr Parser::parse_math1() {
  ExprPtr left = parse_concat();
  while (is_op("+") || is_op("-")) {
    const Token at = take();
    left = binary(at, at.text, std::move(left), parse_concat());
  }
  return left;
}

ExprPtr Parser::parse_concat() {
  ExprPtr left = parse_math2();
  while (is_op("~")) {
    const Token at = take();
    left = binary(at, "~", std::move(left), parse_math2());
  }
  return left;
}

ExprPtr Parser::parse_math2() {
  ExprPtr left = parse_pow();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Token at = take();
    left = binary(at, at.text, std::move(left), parse_pow());
  }
  return left;
}

ExprPtr Parser::parse_pow() {
  ExprPtr left = parse_unary(true);
  while (is_op("**")) {
    const Token at = take();
    left = binary(at, "**", std::move(left), parse_unary(true));
  }
  return left;
}

ExprPtr Parser::parse_unary(bool with_filter) {
  if (++depth_ > kMaxExpressionDepth) {
    error_at(cur(), fmt::format("expression nested deeper than {} levels", kMaxExpressionDepth));
  }
  ExprPtr result;
  if (is_op("-") || is_op("+")) {
    const Token at = take();
    auto u = node<UnaryExpr>(ExprKind::kUnary, at);
    u->op = at.text;
    u->operand = parse_unary(false);
    result = std::move(u);
  } else {
    result = parse_postfix(parse_primary());
  }
  if (with_filter) result = parse_filter_expr(std::move(result));
  --depth_;
  return result;
}

ExprPtr Parser::parse_primary() {
  const Token t = cur();
  switch (t.type) {
    case TokenType::kName: {
      take();
      auto lit = node<LiteralExpr>(ExprKind::kLiteral, t);
      if (t.text == "true" || t.text == "True") lit->value = Value(true);
      else if (t.text == "false" || t.text == "False") lit->value = Value(false);
      else if (t.text == "none" || t.text == "None") lit->value = Value(None{});
      else {
        auto name = node<NameExpr>(ExprKind::kName, t);
        name->name = t.text;
        return name;
      }
      return lit;
    }
    case TokenType::kString: {
      std::string text;
      while (cur().type == TokenType::kString) text += take().text;  // "a" "b" -> "ab"
      auto lit = node<LiteralExpr>(ExprKind::kLiteral, t);
      lit->value = Value(std::move(text));
      return lit;
    }
    case TokenType::kInt:
    case TokenType::kFloat: {
      take();
      auto lit = node<LiteralExpr>(ExprKind::kLiteral, t);
      lit->value = t.type == TokenType::kInt ? Value(t.int_value) : Value(t.float_value);
      return lit;
    }
    default: break;
  }
  if (is_op("(")) {
    take();
    if (is_op(")")) {  // empty tuple
      take();
      auto tuple = node<ListExpr>(ExprKind::kList, t);
      tuple->is_tuple = true;
      return tuple;
    }
    ExprPtr inner = parse_tuple(true);
    expect_op(")");
    return inner;
  }
  if (is_op("[")) return parse_sequence(take(), "]", false);
  if (is_op("{")) return parse_dict(take());
  error_at(t, "unexpected " + describe(t));
}

ExprPtr Parser::parse_sequence(const Token& start, const char* close, bool is_tuple) {
  auto list = node<ListExpr>(ExprKind::kList, start);
  list->is_tuple = is_tuple;
  while (!is_op(close)) {
    if (!list->items.empty()) {
      expect_op(",");
      if (is_op(close)) break;
    }
    list->items.push_back(parse_expression());
  }
  take();
  return list;
}

ExprPtr Parser::parse_dict(const Token& start) {
  auto dict = node<DictExpr>(ExprKind::kDict, start);
  while (!is_op("}")) {
    if (!dict->items.empty()) {
      expect_op(",");
      if (is_op("}")) break;
    }
    ExprPtr key = parse_expression();
    expect_op(":");
    dict->items.emplace_back(std::move(key), parse_expression());
  }
  take();
  return dict;
}

ExprPtr Parser::parse_postfix(ExprPtr expr) {
  while (true) {
    if (is_op(".")) {
      const Token at = take();
      if (cur().type == TokenType::kInt) {  // x.0 is x[0]
        auto item = node<GetItemExpr>(ExprKind::kGetItem, at);
        auto index = node<LiteralExpr>(ExprKind::kLiteral, cur());
        index->value = Value(take().int_value);
        item->object = std::move(expr);
        item->index = std::move(index);
        expr = std::move(item);
        continue;
      }
      auto attr = node<GetAttrExpr>(ExprKind::kGetAttr, at);
      attr->object = std::move(expr);
      attr->name = expect_name();
      expr = std::move(attr);
    } else if (is_op("[")) {
      expr = parse_subscript(std::move(expr), take());
    } else if (is_op("(")) {
      auto call = std::make_unique<CallExpr>(ExprKind::kCall, expr->line, expr->column);
      call->callee = std::move(expr);
      call->args = parse_call_args();
      expr = std::move(call);
    } else {
      return expr;
    }
  }
}

ExprPtr Parser::parse_subscript(ExprPtr object, const Token& start) {
  ExprPtr parts[3];
  int num_colons = 0;
  while (!is_op("]")) {
    if (is_op(":")) {
      if (++num_colons > 2) error_at(cur(), "a slice takes at most two ':'");
      take();
      continue;
    }
    if (parts[num_colons]) error_at(cur(), "expected ':' or ']' in a subscript");
    parts[num_colons] = parse_expression();
  }
  take();
  if (num_colons == 0) {
    if (!parts[0]) error_at(start, "empty subscript '[]'");
    auto item = node<GetItemExpr>(ExprKind::kGetItem, start);
    item->object = std::move(object);
    item->index = std::move(parts[0]);
    return item;
  }
  auto slice = node<SliceExpr>(ExprKind::kSlice, start);
  slice->object = std::move(object);
  slice->start = std::move(parts[0]);
  slice->stop = std::move(parts[1]);
  slice->step = std::move(parts[2]);
  return slice;
}

Arguments Parser::parse_call_args() {
  expect_op("(");
  Arguments args;
  while (!is_op(")")) {
    if (!args.positional.empty() || !args.keyword.empty()) {
      expect_op(",");
      if (is_op(")")) break;
    }
    if (cur().type == TokenType::kName && peek().type == TokenType::kOp && peek().text == "=") {
      std::string name = take().text;
      take();
      args.keyword.emplace_back(std::move(name), parse_expression());
    } else {
      if (!args.keyword.empty()) error_at(cur(), "positional argument after keyword argument");
      args.positional.push_back(parse_expression());
    }
  }
  take();
  return args;
}

ExprPtr Parser::parse_filter_expr(ExprPtr expr) {
  while (true) {
    if (is_op("|")) {
      take();
      expr = parse_filter(std::move(expr));
    } else if (is_name("is")) {
      expr = parse_test(std::move(expr), take());
    } else if (is_op("(")) {
      auto call = std::make_unique<CallExpr>(ExprKind::kCall, expr->line, expr->column);
      call->callee = std::move(expr);
      call->args = parse_call_args();
      expr = std::move(call);
    } else {
      return expr;
    }
  }
}

ExprPtr Parser::parse_filter(ExprPtr operand) {
  const Token at = cur();
  auto filter = node<FilterExpr>(ExprKind::kFilter, at);
  filter->operand = std::move(operand);
  filter->name = expect_name();
  if (is_op("(")) filter->args = parse_call_args();
  return filter;
}

ExprPtr Parser::parse_test(ExprPtr operand, const Token& start) {
  auto test = node<TestExpr>(ExprKind::kTest, start);
  test->operand = std::move(operand);
  if (is_name("not")) {
    take();
    test->negated = true;
  }
  test->name = expect_name();
  const Token& t = cur();
  const bool starts_arg =
      (t.type == TokenType::kName && t.text != "else" && t.text != "or" && t.text != "and") ||
      t.type == TokenType::kString || t.type == TokenType::kInt || t.type == TokenType::kFloat ||
      is_op("[") || is_op("{");
  if (is_op("(")) {
    test->args = parse_call_args();
  } else if (starts_arg) {
    if (is_name("is")) error_at(t, "tests cannot be chained with 'is'");
    test->args.positional.push_back(parse_postfix(parse_primary()));
  }
  return test;
}

}  // namespace strata::jinja
