// Jinja's builtin filters (`x | name(args)`) and tests (`x is name(args)`), with jinja2's
// argument names and defaults; `tojson` is transformers' override (json.dumps, no escaping).
#pragma once

#include <string>

#include "strata/text/jinja/value.h"

namespace strata::jinja {

// Throws RuntimeError for an unknown filter or bad arguments.
Value apply_filter(const std::string& name, const Value& value, const CallArgs& args);
bool apply_test(const std::string& name, const Value& value, const CallArgs& args);

// Collection filters (filters_seq.cpp); nullptr-free lookup used by apply_filter.
bool apply_sequence_filter(const std::string& name, const Value& value, const CallArgs& args,
                           Value* result);

// `a.b.0` as jinja's make_attrgetter resolves it: item lookup, then attribute.
Value resolve_attribute_path(const Value& value, const std::string& path);
size_t python_len(const Value& value);  // len(); throws for values without a length

}  // namespace strata::jinja
