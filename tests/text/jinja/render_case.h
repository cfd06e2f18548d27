// Shared context for the Jinja unit tests: render a template against one fixed set of
// variables (a dict with non-sorted keys, lists, messages, a non-ASCII string).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "strata/text/jinja/template.h"

namespace strata::jinja {

inline const nlohmann::ordered_json& test_context() {
  static const nlohmann::ordered_json context = nlohmann::ordered_json::parse(R"({
    "d": {"b": 2, "a": 1}, "l": [3, 1, 2], "s": "Hello World", "n": null, "t": true,
    "f": 1.5, "i": 7,
    "msgs": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"},
             {"role": "user", "content": "bye", "extra": 1}],
    "e": [], "u": "\u00e9\ud83c\udf0ax"})");
  return context;
}

inline std::string render_case(const std::string& source) {
  return Template::parse(source).render(test_context());
}

}  // namespace strata::jinja
