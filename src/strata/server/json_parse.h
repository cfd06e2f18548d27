// JSON text from clients to ordered_json, in time linear in the text and with bounded
// nesting. nlohmann's own parser into ordered_json searches an object's keys for each new
// one (a 400 KB object of short keys took 14 s), and the values it builds are walked
// recursively later (copies, dumps, the template's conversion), so depth is capped here.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace strata::server {

struct ParsedJson {
  std::optional<nlohmann::ordered_json> value;  // nullopt: not JSON, or too deep
  std::string error;                            // why not (nlohmann's message, or the depth)
  bool too_deep = false;                        // arrays and objects open more than max_depth at once
};

// The value of `text`. A repeated key keeps its first position and its last value, as
// nlohmann's parser does.
ParsedJson parse_json(std::string_view text, int max_depth);

}  // namespace strata::server
