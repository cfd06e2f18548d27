#include "strata/server/tool_parsers/parse_helpers.h"

#include "strata/server/json_fields.h"
#include "strata/server/json_parse.h"

namespace strata::server {

std::string_view trim_blank(std::string_view s) {
  const char* ws = " \t\r\n";
  const size_t begin = s.find_first_not_of(ws);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(ws) - begin + 1);
}

size_t skip_blank(std::string_view text, size_t pos) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\r' || text[pos] == '\n'))
    ++pos;
  return pos;
}

CallMatch need_more_or_not(std::string_view text, bool at_end) {
  if (!at_end) return {.kind = CallMatch::Kind::kNeedMore};
  return {.kind = CallMatch::Kind::kNotCalls, .length = text.size()};
}

std::optional<Block> closed_block(std::string_view text, size_t open_size, std::string_view close, bool at_end) {
  const size_t at = text.find(close, open_size);
  if (at != std::string_view::npos) return Block{.body = text.substr(open_size, at - open_size), .length = at + close.size()};
  if (!at_end) return std::nullopt;
  return Block{.body = text.substr(open_size), .length = text.size()};
}

size_t json_value_length(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

std::optional<nlohmann::ordered_json> parse_model_json(std::string_view text) {
  ParsedJson parsed = parse_json(trim_blank(text), kMaxJsonNesting);
  return std::move(parsed.value);
}

}  // namespace strata::server
