// Jinja's builtin tests (`x is defined`, `x is equalto 3`, ...), as jinja2 defines them:
// `number` counts bools, `integer` does not; `sequence` is anything with a length.
#include <fmt/format.h>

#include "strata/text/jinja/builtins.h"
#include "strata/text/jinja/operators.h"
#include "strata/text/jinja/utf8.h"

namespace strata::jinja {
namespace {

const Value& required_arg(const CallArgs& args, const std::string& test) {
  const Value* v = args.get(0, "other");
  if (!v) throw RuntimeError(fmt::format("test '{}' needs an argument", test));
  return *v;
}

bool compare_test(const std::string& name, const Value& value, const CallArgs& args, bool* result) {
  static const std::pair<const char*, const char*> kOps[] = {
      {"equalto", "=="}, {"eq", "=="}, {"==", "=="}, {"ne", "!="}, {"!=", "!="},
      {"lt", "<"}, {"lessthan", "<"}, {"<", "<"}, {"le", "<="}, {"<=", "<="},
      {"gt", ">"}, {"greaterthan", ">"}, {">", ">"}, {"ge", ">="}, {">=", ">="}};
  for (const auto& [test, op] : kOps) {
    if (name == test) {
      *result = compare_op(op, value, required_arg(args, name));
      return true;
    }
  }
  return false;
}

bool integer_like(const Value& v) { return v.is_int(); }

}  // namespace

bool apply_test(const std::string& name, const Value& value, const CallArgs& args) {
  bool result = false;
  if (compare_test(name, value, args, &result)) return result;
  if (name == "defined") return !value.is_undefined();
  if (name == "undefined") return value.is_undefined();
  if (name == "none") return value.is_none();
  if (name == "string") return value.is_string();
  if (name == "mapping") return value.is_dict() && !value.as_dict().is_namespace;
  if (name == "iterable") return value.is_string() || value.is_list() || value.is_dict() || value.is_undefined();
  if (name == "sequence") return value.is_string() || value.is_list() || value.is_dict() || value.is_undefined();
  if (name == "number") return value.is_number();
  if (name == "integer") return integer_like(value);
  if (name == "float") return value.is_float();
  if (name == "boolean") return value.is_bool();
  if (name == "true") return value.is_bool() && value.as_bool();
  if (name == "false") return value.is_bool() && !value.as_bool();
  if (name == "callable") return value.is_callable();
  if (name == "sameas") {
    const Value& other = required_arg(args, name);
    if (value.is_list() || value.is_dict() || value.is_callable()) {
      return value.kind() == other.kind() && value.equals(other) &&
             (value.is_list() ? &value.as_list() == &other.as_list()
                              : value.is_dict() ? &value.as_dict() == &other.as_dict() : true);
    }
    return value.kind() == other.kind() && value.equals(other);
  }
  if (name == "in") return contains(required_arg(args, name), value);
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (!value.is_int() && !value.is_bool()) {
      throw RuntimeError(fmt::format("test '{}' needs an integer, not {}", name, value.type_name()));
    }
    const int64_t v = value.to_int();
    if (name == "odd") return v % 2 != 0;
    if (name == "even") return v % 2 == 0;
    const Value& d = required_arg(args, name);
    if (!d.is_int() || d.as_int() == 0) throw RuntimeError("divisibleby needs a non-zero integer");
    return v % d.as_int() == 0;
  }
  if (name == "lower") return value.is_string() && ascii_lower(value.as_string()) == value.as_string();
  if (name == "upper") return value.is_string() && ascii_upper(value.as_string()) == value.as_string();
  if (name == "escaped") return false;
  throw RuntimeError(fmt::format("no test named '{}'", name));
}

}  // namespace strata::jinja
