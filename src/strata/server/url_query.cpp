#include "strata/server/url_query.h"

#include <algorithm>

namespace strata::server {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> decode_form(std::string_view s) {
  std::string plus_as_blank(s);
  std::replace(plus_as_blank.begin(), plus_as_blank.end(), '+', ' ');
  return percent_decode(plus_as_blank);
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::optional<QueryPairs> parse_query(std::string_view target) {
  const size_t start = target.find('?');
  if (start == std::string_view::npos) return QueryPairs{};
  std::string_view query = target.substr(start + 1);
  query = query.substr(0, query.find('#'));
  QueryPairs pairs;
  while (!query.empty()) {
    const size_t end = std::min(query.find('&'), query.size());
    const std::string_view pair = query.substr(0, end);
    query.remove_prefix(std::min(end + 1, query.size()));
    if (pair.empty()) continue;
    const size_t eq = std::min(pair.find('='), pair.size());
    std::optional<std::string> name = decode_form(pair.substr(0, eq));
    std::optional<std::string> value = decode_form(eq < pair.size() ? pair.substr(eq + 1) : std::string_view());
    if (!name || !value) return std::nullopt;
    pairs.emplace_back(std::move(*name), std::move(*value));
  }
  return pairs;
}

}  // namespace strata::server
