// Python semantics of Jinja's operators on Values: arithmetic, ordering, membership,
// subscripts and slices. Type mismatches throw RuntimeError with Python's wording.
#pragma once

#include <optional>
#include <string>

#include "strata/text/jinja/value.h"

namespace strata::jinja {

// op: + - * / // % ** ~
Value binary_op(const std::string& op, const Value& left, const Value& right);
Value negate(const Value& operand);
// op: == != < > <= >= in "not in"
bool compare_op(const std::string& op, const Value& left, const Value& right);
// Python's < for numbers, strings and lists; throws on unorderable types.
bool python_less(const Value& left, const Value& right);
bool contains(const Value& container, const Value& item);
// obj[index] as jinja2's getitem: missing keys and indices give Undefined.
Value get_item(const Value& object, const Value& index);
Value slice(const Value& object, const Value& start, const Value& stop, const Value& step);

}  // namespace strata::jinja
