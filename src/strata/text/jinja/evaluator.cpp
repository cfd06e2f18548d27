// Expression evaluation: names, literals, operators with Python semantics, attribute and
// item access, calls, filters and tests. RuntimeErrors get the innermost node's location.
#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/text/jinja/builtins.h"
#include "strata/text/jinja/interpreter.h"
#include "strata/text/jinja/methods.h"
#include "strata/text/jinja/operators.h"

namespace strata::jinja {

Value Interpreter::eval(const Expr& expr, const ScopePtr& scope) {
  try {
    return eval_kind(expr, scope);
  } catch (const RuntimeError& e) {
    throw Error(located(expr.line, expr.column, e.what()));
  }
}

Value Interpreter::eval_kind(const Expr& expr, const ScopePtr& scope) {
  switch (expr.kind) {
    case ExprKind::kLiteral: return static_cast<const LiteralExpr&>(expr).value;
    case ExprKind::kName: {
      const std::string& name = static_cast<const NameExpr&>(expr).name;
      const Value* v = scope->find(name);
      return v ? *v : Value::undefined(fmt::format("'{}' is undefined", name));
    }
    case ExprKind::kList:
    case ExprKind::kDict: return eval_collection(expr, scope);
    case ExprKind::kUnary: {
      const auto& u = static_cast<const UnaryExpr&>(expr);
      const Value operand = eval(*u.operand, scope);
      if (u.op == "not") return Value(!operand.truthy());
      if (u.op == "-") return negate(operand);
      if (!operand.is_number()) {
        operand.require_defined();
        throw RuntimeError("bad operand type for unary +: '" + operand.type_name() + "'");
      }
      return operand;
    }
    case ExprKind::kBinary: return eval_binary(static_cast<const BinaryExpr&>(expr), scope);
    case ExprKind::kCompare: return eval_compare(static_cast<const CompareExpr&>(expr), scope);
    case ExprKind::kCond: {
      const auto& c = static_cast<const CondExpr&>(expr);
      if (eval(*c.cond, scope).truthy()) return eval(*c.then_expr, scope);
      if (c.else_expr) return eval(*c.else_expr, scope);
      return Value::undefined(fmt::format(
          "the inline if-expression on line {} evaluated to false and no else section was defined",
          expr.line));
    }
    case ExprKind::kGetAttr: {
      const auto& a = static_cast<const GetAttrExpr&>(expr);
      return get_attribute(eval(*a.object, scope), a.name);
    }
    case ExprKind::kGetItem: {
      const auto& g = static_cast<const GetItemExpr&>(expr);
      const Value object = eval(*g.object, scope);
      return get_item(object, eval(*g.index, scope));
    }
    case ExprKind::kSlice: {
      const auto& s = static_cast<const SliceExpr&>(expr);
      const Value object = eval(*s.object, scope);
      auto part = [&](const ExprPtr& e) { return e ? eval(*e, scope) : Value(None{}); };
      return slice(object, part(s.start), part(s.stop), part(s.step));
    }
    case ExprKind::kCall: return eval_call(static_cast<const CallExpr&>(expr), scope);
    case ExprKind::kFilter: {
      const auto& f = static_cast<const FilterExpr&>(expr);
      return eval_filter(f, eval(*f.operand, scope), scope);
    }
    case ExprKind::kTest: {
      const auto& t = static_cast<const TestExpr&>(expr);
      const Value operand = eval(*t.operand, scope);
      const bool result = apply_test(t.name, operand, eval_args(t.args, scope));
      return Value(result != t.negated);
    }
  }
  throw RuntimeError("unknown expression");
}

Value Interpreter::eval_collection(const Expr& expr, const ScopePtr& scope) {
  if (expr.kind == ExprKind::kList) {
    const auto& l = static_cast<const ListExpr&>(expr);
    std::vector<Value> items;
    for (const ExprPtr& item : l.items) items.push_back(eval(*item, scope));
    return Value::list(std::move(items), l.is_tuple);
  }
  Value dict = Value::dict();
  for (const auto& [key_expr, value_expr] : static_cast<const DictExpr&>(expr).items) {
    const Value key = eval(*key_expr, scope);
    if (!key.is_string()) {
      throw RuntimeError("dict keys must be strings here, got " + key.type_name());
    }
    dict.as_dict().set(key.as_string(), eval(*value_expr, scope));
  }
  return dict;
}

Value Interpreter::eval_binary(const BinaryExpr& expr, const ScopePtr& scope) {
  const Value left = eval(*expr.left, scope);
  if (expr.op == "and") return left.truthy() ? eval(*expr.right, scope) : left;
  if (expr.op == "or") return left.truthy() ? left : eval(*expr.right, scope);
  return binary_op(expr.op, left, eval(*expr.right, scope));
}

Value Interpreter::eval_compare(const CompareExpr& expr, const ScopePtr& scope) {
  Value left = eval(*expr.first, scope);
  for (const auto& [op, right_expr] : expr.rest) {
    Value right = eval(*right_expr, scope);
    if (!compare_op(op, left, right)) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

CallArgs Interpreter::eval_args(const Arguments& args, const ScopePtr& scope) {
  CallArgs out;
  for (const ExprPtr& e : args.positional) out.positional.push_back(eval(*e, scope));
  for (const auto& [name, e] : args.keyword) out.keyword.emplace_back(name, eval(*e, scope));
  return out;
}

Value Interpreter::eval_call(const CallExpr& expr, const ScopePtr& scope) {
  const Value callee = eval(*expr.callee, scope);
  if (!callee.is_callable()) {
    callee.require_defined();
    throw RuntimeError(fmt::format("'{}' object is not callable", callee.type_name()));
  }
  return callee.as_callable().fn(eval_args(expr.args, scope));
}

Value Interpreter::eval_filter(const FilterExpr& expr, const Value& operand, const ScopePtr& scope) {
  return apply_filter(expr.name, operand, eval_args(expr.args, scope));
}

}  // namespace strata::jinja
