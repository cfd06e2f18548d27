// Python's json.dumps on a Value, as transformers' `tojson` filter calls it: ensure_ascii off
// by default, separators ", " / ": " (or "," / ": " with indent), keys in insertion order.
#pragma once

#include <optional>
#include <string>

#include "strata/text/jinja/value.h"

namespace strata::jinja {

struct JsonDumpOptions {
  std::optional<std::string> indent;  // the per-level indent string; none = one line
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool ensure_ascii = false;
  bool sort_keys = false;
};

std::string python_json_dumps(const Value& value, const JsonDumpOptions& options);

}  // namespace strata::jinja
