#include "strata/server/tool_call_parser.h"

#include <nlohmann/json.hpp>

#include "strata/server/json_fields.h"
#include "strata/server/json_parse.h"
#include "strata/server/random_id.h"

namespace strata::server {
namespace {

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n";
  const size_t begin = s.find_first_not_of(ws);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(ws) - begin + 1);
}

// The call in one block's JSON, or false when it is not one.
bool parse_block(std::string_view body, ToolCall& call) {
  // Bounded like a client's JSON: the dump below recurses, and model output can nest deep.
  const ParsedJson parsed = parse_json(trim(body), kMaxJsonNesting);
  if (!parsed.value || !parsed.value->is_object()) return false;
  const nlohmann::ordered_json& j = *parsed.value;
  const auto name = j.find("name");
  if (name == j.end() || !name->is_string()) return false;
  auto args = j.find("arguments");
  if (args == j.end()) args = j.find("parameters");
  call.name = name->get<std::string>();
  if (args == j.end() || args->is_null()) call.arguments = "{}";
  else if (args->is_string()) call.arguments = args->get<std::string>();
  else call.arguments = args->dump();
  call.id = make_tool_call_id();
  return true;
}

}  // namespace

ParsedOutput parse_tool_calls(std::string_view text) {
  ParsedOutput out;
  std::string content;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find(kToolCallOpen, pos);
    if (open == std::string_view::npos) break;
    const size_t body_begin = open + kToolCallOpen.size();
    const size_t close = text.find(kToolCallClose, body_begin);
    const size_t body_end = close == std::string_view::npos ? text.size() : close;
    const size_t block_end = close == std::string_view::npos ? text.size() : close + kToolCallClose.size();
    content.append(text.substr(pos, open - pos));
    ToolCall call;
    if (parse_block(text.substr(body_begin, body_end - body_begin), call)) out.tool_calls.push_back(std::move(call));
    else content.append(text.substr(open, block_end - open));
    pos = block_end;
  }
  if (pos < text.size()) content.append(text.substr(pos));
  out.content = out.tool_calls.empty() ? std::string(text) : std::string(trim(content));
  return out;
}

std::string make_tool_call_id() { return "call_" + random_alnum(24); }

}  // namespace strata::server
