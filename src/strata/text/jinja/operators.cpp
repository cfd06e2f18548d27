// Python semantics of Jinja's operators: int/float promotion, floor division and modulo that
// follow the divisor's sign, str and list concatenation/repetition, ordering and slicing.
#include "strata/text/jinja/operators.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "strata/text/jinja/methods.h"
#include "strata/text/jinja/utf8.h"

namespace strata::jinja {
namespace {

constexpr size_t kMaxRepeatBytes = size_t{64} << 20;

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
  a.require_defined();
  b.require_defined();
  throw RuntimeError(fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", op,
                                 a.type_name(), b.type_name()));
}

Value int_op(const std::string& op, int64_t a, int64_t b) {
  int64_t r = 0;
  if (op == "+" && !__builtin_add_overflow(a, b, &r)) return Value(r);
  if (op == "-" && !__builtin_sub_overflow(a, b, &r)) return Value(r);
  if (op == "*" && !__builtin_mul_overflow(a, b, &r)) return Value(r);
  if (op == "//" || op == "%") {
    if (b == 0) throw RuntimeError("integer division or modulo by zero");
    if (a == std::numeric_limits<int64_t>::min() && b == -1) {  // the quotient overflows
      if (op == "%") return Value(int64_t{0});
      throw RuntimeError("integer overflow in '//'");
    }
    int64_t q = a / b;
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) {
      --q;
      m += b;
    }
    return op == "//" ? Value(q) : Value(m);
  }
  if (op == "**" && b >= 0) {
    int64_t result = 1;
    for (int64_t i = 0; i < b; ++i) {
      if (__builtin_mul_overflow(result, a, &result)) throw RuntimeError("integer overflow in '**'");
      if (result == 0 || result == 1) break;
    }
    return Value(result);
  }
  if (op == "**") return Value(std::pow(static_cast<double>(a), static_cast<double>(b)));
  throw RuntimeError(fmt::format("integer overflow in '{}'", op));
}

Value float_op(const std::string& op, double a, double b) {
  if (op == "+") return Value(a + b);
  if (op == "-") return Value(a - b);
  if (op == "*") return Value(a * b);
  if (op == "**") return Value(std::pow(a, b));
  if (b == 0.0) throw RuntimeError("float division by zero");
  if (op == "/") return Value(a / b);
  double m = std::fmod(a, b);
  if (m != 0.0 && ((m < 0) != (b < 0))) m += b;
  if (op == "%") return Value(m);
  return Value(std::floor(a / b));
}

Value repeat(const Value& seq, int64_t n) {
  const int64_t count = std::max<int64_t>(n, 0);
  if (seq.is_string()) {
    // Divided, not multiplied: the product can wrap around and pass the check.
    if (count > 0 && seq.as_string().size() > kMaxRepeatBytes / count) throw RuntimeError("string repetition too large");
    std::string out;
    for (int64_t i = 0; i < count; ++i) out += seq.as_string();
    return Value(std::move(out));
  }
  const auto& items = seq.as_list().items;
  if (count > 0 && items.size() > kMaxRepeatBytes / 16 / count) throw RuntimeError("list repetition too large");
  std::vector<Value> out;
  for (int64_t i = 0; i < count; ++i) out.insert(out.end(), items.begin(), items.end());
  return Value::list(std::move(out), seq.as_list().is_tuple);
}

}  // namespace

Value binary_op(const std::string& op, const Value& a, const Value& b) {
  if (op == "~") return Value(a.str() + b.str());
  if (a.is_number() && b.is_number()) {
    if (op == "/") {
      if (b.to_double() == 0.0) throw RuntimeError("division by zero");
      return Value(a.to_double() / b.to_double());
    }
    if (!a.is_float() && !b.is_float()) return int_op(op, a.to_int(), b.to_int());
    return float_op(op, a.to_double(), b.to_double());
  }
  if (op == "+" && a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
  if (op == "+" && a.is_list() && b.is_list()) {
    std::vector<Value> items = a.as_list().items;
    items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
    return Value::list(std::move(items), a.as_list().is_tuple);
  }
  if (op == "*" && (a.is_string() || a.is_list()) && (b.is_int() || b.is_bool())) {
    return repeat(a, b.to_int());
  }
  if (op == "*" && (b.is_string() || b.is_list()) && (a.is_int() || a.is_bool())) {
    return repeat(b, a.to_int());
  }
  unsupported(op, a, b);
}

Value negate(const Value& v) {
  if (v.is_float()) return Value(-v.as_float());
  if (v.is_int() || v.is_bool()) {
    if (v.to_int() == std::numeric_limits<int64_t>::min()) throw RuntimeError("integer overflow");
    return Value(-v.to_int());
  }
  v.require_defined();
  throw RuntimeError(fmt::format("bad operand type for unary -: '{}'", v.type_name()));
}

bool python_less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.to_double() < b.to_double();
    return a.to_int() < b.to_int();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
  if (a.is_list() && b.is_list()) {
    const auto& x = a.as_list().items;
    const auto& y = b.as_list().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!x[i].equals(y[i])) return python_less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  a.require_defined();
  b.require_defined();
  throw RuntimeError(fmt::format("'<' not supported between instances of '{}' and '{}'",
                                 a.type_name(), b.type_name()));
}

bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string()) {
      item.require_defined();
      throw RuntimeError(fmt::format("'in <string>' requires string as left operand, not {}",
                                     item.type_name()));
    }
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  if (container.is_dict() && !container.as_dict().is_namespace) {
    return item.is_string() && container.as_dict().find(item.as_string()) != nullptr;
  }
  for (const Value& v : container.iterate()) {
    if (v.equals(item)) return true;
  }
  return false;
}

bool compare_op(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return a.equals(b);
  if (op == "!=") return !a.equals(b);
  if (op == "<") return python_less(a, b);
  if (op == ">") return python_less(b, a);
  if (op == "<=") return !python_less(b, a);
  if (op == ">=") return !python_less(a, b);
  if (op == "in") return contains(b, a);
  return !contains(b, a);  // not in
}

Value get_item(const Value& object, const Value& index) {
  object.require_defined();
  if (object.is_dict() && index.is_string()) {
    if (const Value* v = object.as_dict().find(index.as_string())) return *v;
    return get_attribute(object, index.as_string());
  }
  if ((object.is_list() || object.is_string()) && (index.is_int() || index.is_bool())) {
    const bool is_str = object.is_string();
    std::vector<std::string> chars;
    if (is_str) chars = utf8_chars(object.as_string());
    const int64_t size = is_str ? std::ssize(chars) : std::ssize(object.as_list().items);
    int64_t i = index.to_int();
    if (i < 0) i += size;
    if (i < 0 || i >= size) {
      return Value::undefined(fmt::format("'{} object' has no element {}", object.type_name(),
                                          index.to_int()));
    }
    return is_str ? Value(chars[i]) : object.as_list().items[i];
  }
  if (index.is_string()) return get_attribute(object, index.as_string());
  return Value::undefined(
      fmt::format("'{} object' has no element {}", object.type_name(), index.repr()));
}

Value slice(const Value& object, const Value& start, const Value& stop, const Value& step) {
  object.require_defined();
  auto as_index = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    if (!v.is_int() && !v.is_bool()) {
      throw RuntimeError(fmt::format("slice {} must be an integer or none", what));
    }
    return v.to_int();
  };
  const int64_t st = as_index(step, "step").value_or(1);
  if (st == 0) throw RuntimeError("slice step cannot be zero");
  std::vector<std::string> chars;
  if (object.is_string()) chars = utf8_chars(object.as_string());
  else if (!object.is_list()) throw RuntimeError(fmt::format("'{}' object is not subscriptable", object.type_name()));
  const int64_t n = object.is_string() ? std::ssize(chars) : std::ssize(object.as_list().items);
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t i = *v < 0 ? *v + n : *v;
    if (st > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  const int64_t begin = clamp(as_index(start, "start"), st > 0 ? 0 : n - 1);
  const int64_t end = clamp(as_index(stop, "stop"), st > 0 ? n : -1);
  std::string out_str;
  std::vector<Value> out_list;
  for (int64_t i = begin; st > 0 ? i < end : i > end; i += st) {
    if (object.is_string()) out_str += chars[i];
    else out_list.push_back(object.as_list().items[i]);
  }
  if (object.is_string()) return Value(std::move(out_str));
  return Value::list(std::move(out_list), object.as_list().is_tuple);
}

}  // namespace strata::jinja
