// The GBNF grammar of forced Qwen3-Coder XML calls (qwen3_coder's tool_choice "required" or
// named): <tool_call>\n<function=NAME>, then each parameter of NAME's schema in the schema's
// order (the required ones always, the others maybe) as \n<parameter=KEY>\nVALUE\n</parameter>,
// then \n</function>\n</tool_call>; with parallel calls more may follow, one per line. A value
// follows its property's type (integer, number, boolean, null, enum strings, JSON for objects
// and arrays); free text never holds "<" before "/", "p" or "<", so it cannot end its markup.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace strata::server {

// `functions`: the allowed tools' "function" objects (name, parameters). Throws strata::Error
// for a function or parameter name that the markup cannot hold (<, >, a newline, or empty).
std::string xml_calls_gbnf(const nlohmann::ordered_json& functions, bool parallel);

}  // namespace strata::server
