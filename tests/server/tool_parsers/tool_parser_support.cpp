#include "server/tool_parsers/tool_parser_support.h"

#include <gtest/gtest.h>

#include "strata/server/tool_call_stream.h"
#include "strata/server/tool_parsers/parse_helpers.h"

namespace strata::server {
namespace {

// The stream's totals for `pieces`; content trimmed where there were calls, as parse does.
ParsedOutput streamed(const ToolParser& parser, const std::vector<std::string_view>& pieces,
                      const nlohmann::ordered_json& tools) {
  ToolCallStream stream(parser, tools);
  ParsedOutput out;
  auto take = [&](ToolStreamStep step) {
    out.content += step.content;
    for (ToolCall& call : step.calls) out.tool_calls.push_back(std::move(call));
  };
  for (std::string_view piece : pieces) take(stream.push(piece));
  take(stream.finish());
  if (!out.tool_calls.empty()) out.content = std::string(trim_blank(out.content));
  return out;
}

}  // namespace

std::vector<std::string> call_lines(const std::vector<ToolCall>& calls) {
  std::vector<std::string> lines;
  for (const ToolCall& call : calls) lines.push_back(call.name + " " + call.arguments);
  return lines;
}

ParsedOutput expect_streams_like_whole(const ToolParser& parser, std::string_view text,
                                       const nlohmann::ordered_json& tools) {
  const ParsedOutput whole = parse_tool_calls(parser, text, tools);
  for (size_t split = 0; split <= text.size(); ++split) {
    const ParsedOutput two = streamed(parser, {text.substr(0, split), text.substr(split)}, tools);
    EXPECT_EQ(two.content, whole.content) << "split at byte " << split << " of: " << text;
    EXPECT_EQ(call_lines(two.tool_calls), call_lines(whole.tool_calls)) << "split at byte " << split;
  }
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < text.size(); ++i) bytes.push_back(text.substr(i, 1));
  const ParsedOutput one_by_one = streamed(parser, bytes, tools);
  EXPECT_EQ(one_by_one.content, whole.content) << "byte by byte: " << text;
  EXPECT_EQ(call_lines(one_by_one.tool_calls), call_lines(whole.tool_calls)) << "byte by byte";
  return whole;
}

}  // namespace strata::server
