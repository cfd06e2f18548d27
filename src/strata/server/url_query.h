// The parts of a request target after the path: percent-decoding and the query's
// name=value pairs (application/x-www-form-urlencoded: '+' is a blank there).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::server {

// nullopt for a malformed escape ('%' not followed by two hex digits).
std::optional<std::string> percent_decode(std::string_view s);

using QueryPairs = std::vector<std::pair<std::string, std::string>>;

// The decoded pairs of the query in `target` (after '?', before any '#'), in order; a name
// without '=' has an empty value. nullopt when an escape is malformed.
std::optional<QueryPairs> parse_query(std::string_view target);

}  // namespace strata::server
