// Reading request-body fields with their types and ranges checked. A field that is absent
// or null reads as nullopt; a wrong type or an out-of-range value is a 400 naming the field.
// Bodies are ordered_json so tool schemas reach the chat template in the client's key order.
// Bodies are parsed in linear time with nesting bounded (json_parse.h), so every later walk
// over a body (copies, dumps, the template's values, schema compilation) stays shallow.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace strata::server {

using Json = nlohmann::ordered_json;

// Arrays and objects open at once, at most, in a body or in JSON text inside one.
inline constexpr int kMaxJsonNesting = 128;

// The parsed body (parse_json: linear time); a 400 for text that is not a JSON object or
// nests deeper than kMaxJsonNesting.
Json parse_body(const std::string& text);

// A client's value for an error message: scalars as JSON (long strings cut short), arrays
// and objects by kind, so a message never grows with what was sent.
std::string describe(const Json& value);

// The field's value, or nullptr when absent or null.
const Json* find_field(const Json& body, const char* name);

std::optional<double> read_number(const Json& body, const char* name, double lo, double hi);
std::optional<int64_t> read_int(const Json& body, const char* name, int64_t lo, int64_t hi);
std::optional<bool> read_bool(const Json& body, const char* name);
std::optional<std::string> read_string(const Json& body, const char* name);

// Token ids: a JSON array of integers in [0, vocab_size); `name` is used in messages.
std::vector<int32_t> read_token_ids(const Json& value, const std::string& name, int64_t vocab_size);

}  // namespace strata::server
