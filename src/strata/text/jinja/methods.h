// Attribute access as jinja2 does it: dict keys, namespace attributes, and the Python methods
// of str and dict that chat templates call (`content.split(...)`, `d.items()`, ...).
#pragma once

#include <string>

#include "strata/text/jinja/value.h"

namespace strata::jinja {

// obj.name: a bound method, a dict value, or Undefined (raises only when obj is Undefined).
Value get_attribute(const Value& object, const std::string& name);

// Reads an optional argument and checks its type; throws RuntimeError naming `what`.
const std::string* string_arg(const CallArgs& args, size_t index, const std::string& name,
                              const std::string& what);
int64_t int_arg(const CallArgs& args, size_t index, const std::string& name, int64_t dflt,
                const std::string& what);
bool bool_arg(const CallArgs& args, size_t index, const std::string& name, bool dflt);

}  // namespace strata::jinja
