#include "server/tool_parsers/tool_parser_support.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "strata/server/tool_call_stream.h"
#include "strata/server/tool_parsers/parse_helpers.h"

namespace strata::server {
namespace {

// Whole UTF-8 characters only: a delta goes into a JSON string of its own.
bool whole_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t length = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    i += length;
  }
  return true;
}

struct StreamedCall {
  std::string id, name, arguments;
  bool closed = false;
};

// The stream's totals for `pieces`; content trimmed where there were calls, as parse does.
// Each call's deltas are checked against the call they end in, and (when the text is valid
// UTF-8) hold whole characters.
ParsedOutput streamed(const ToolParser& parser, const std::vector<std::string_view>& pieces,
                      const nlohmann::ordered_json& tools, bool valid_utf8) {
  ToolCallStream stream(parser, tools);
  ParsedOutput out;
  std::vector<StreamedCall> deltas;
  auto take = [&](ToolStreamStep step) {
    out.content += step.content;
    for (const ToolCallDelta& d : step.deltas) {
      EXPECT_LE(d.content_before, step.content.size());
      if (!d.id.empty()) {
        EXPECT_EQ(d.call, static_cast<int32_t>(deltas.size())) << "calls are numbered in order";
        EXPECT_TRUE(d.arguments.empty() && !d.name.empty());
        deltas.push_back({.id = d.id, .name = d.name});
        continue;
      }
      ASSERT_LT(static_cast<size_t>(d.call), deltas.size()) << "a delta before its call's first";
      StreamedCall& call = deltas[static_cast<size_t>(d.call)];
      EXPECT_FALSE(call.closed) << "a delta after its call closed";
      EXPECT_TRUE(!valid_utf8 || whole_utf8(d.arguments)) << "a delta splits a character: " << d.arguments;
      call.arguments += d.arguments;
      call.closed = d.closes;
    }
    for (ToolCall& call : step.calls) {
      const auto it = std::find_if(deltas.begin(), deltas.end(), [&](const auto& s) { return s.id == call.id; });
      EXPECT_TRUE(it != deltas.end() && it->closed && it->name == call.name && it->arguments == call.arguments)
          << "the deltas of " << call.name << " do not add up to " << call.arguments;
      out.tool_calls.push_back(std::move(call));
    }
  };
  for (std::string_view piece : pieces) take(stream.push(piece));
  take(stream.finish());
  for (const StreamedCall& call : deltas) EXPECT_TRUE(call.closed) << call.name << " never closed";
  if (!out.tool_calls.empty()) out.content = std::string(trim_blank(out.content));
  return out;
}

}  // namespace

std::vector<std::string> delta_lines(const ToolParser& parser, const std::vector<std::string_view>& pieces,
                                     const nlohmann::ordered_json& tools) {
  ToolCallStream stream(parser, tools);
  std::vector<std::string> lines;
  auto take = [&](const ToolStreamStep& step) {
    for (const ToolCallDelta& d : step.deltas) {
      const std::string call = std::to_string(d.call);
      if (!d.id.empty()) lines.push_back(call + " " + d.name);
      if (!d.arguments.empty()) lines.push_back(call + " +" + d.arguments);
      if (d.closes) lines.push_back(call + " .");
    }
  };
  for (std::string_view piece : pieces) take(stream.push(piece));
  take(stream.finish());
  return lines;
}

std::vector<std::string> call_lines(const std::vector<ToolCall>& calls) {
  std::vector<std::string> lines;
  for (const ToolCall& call : calls) lines.push_back(call.name + " " + call.arguments);
  return lines;
}

ParsedOutput expect_streams_like_whole(const ToolParser& parser, std::string_view text,
                                       const nlohmann::ordered_json& tools) {
  const ParsedOutput whole = parse_tool_calls(parser, text, tools);
  const bool valid_utf8 = whole_utf8(text);
  for (size_t split = 0; split <= text.size(); ++split) {
    const ParsedOutput two = streamed(parser, {text.substr(0, split), text.substr(split)}, tools, valid_utf8);
    EXPECT_EQ(two.content, whole.content) << "split at byte " << split << " of: " << text;
    EXPECT_EQ(call_lines(two.tool_calls), call_lines(whole.tool_calls)) << "split at byte " << split;
  }
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < text.size(); ++i) bytes.push_back(text.substr(i, 1));
  const ParsedOutput one_by_one = streamed(parser, bytes, tools, valid_utf8);
  EXPECT_EQ(one_by_one.content, whole.content) << "byte by byte: " << text;
  EXPECT_EQ(call_lines(one_by_one.tool_calls), call_lines(whole.tool_calls)) << "byte by byte";
  return whole;
}

}  // namespace strata::server
