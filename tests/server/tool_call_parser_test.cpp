#include "strata/server/tool_call_parser.h"

#include <gtest/gtest.h>

#include "strata/server/tool_call_stream.h"

namespace strata::server {
namespace {

TEST(ToolCallParser, HermesBlocksBecomeCalls) {
  const ParsedOutput out = parse_tool_calls(
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n"
      "</tool_call>\n<tool_call>{\"name\": \"now\", \"arguments\": {}}</tool_call>");
  ASSERT_EQ(out.tool_calls.size(), 2u);
  EXPECT_EQ(out.tool_calls[0].name, "get_weather");
  EXPECT_EQ(out.tool_calls[0].arguments, "{\"city\":\"Paris\",\"days\":2}");  // key order kept
  EXPECT_EQ(out.tool_calls[1].name, "now");
  EXPECT_EQ(out.tool_calls[1].arguments, "{}");
  EXPECT_EQ(out.content, "Let me check.");
  EXPECT_EQ(out.tool_calls[0].id.substr(0, 5), "call_");
  EXPECT_EQ(out.tool_calls[0].id.size(), 29u);
  EXPECT_NE(out.tool_calls[0].id, out.tool_calls[1].id);
}

TEST(ToolCallParser, StringArgumentsAndParametersKey) {
  const ParsedOutput a = parse_tool_calls("<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 1}\"}</tool_call>");
  ASSERT_EQ(a.tool_calls.size(), 1u);
  EXPECT_EQ(a.tool_calls[0].arguments, "{\"x\": 1}");
  const ParsedOutput b = parse_tool_calls("<tool_call>{\"name\": \"g\", \"parameters\": {\"y\": [1]}}</tool_call>");
  ASSERT_EQ(b.tool_calls.size(), 1u);
  EXPECT_EQ(b.tool_calls[0].arguments, "{\"y\":[1]}");
  EXPECT_EQ(b.content, "");
}

TEST(ToolCallParser, UnclosedFinalBlockIsParsed) {
  const ParsedOutput out = parse_tool_calls("<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": true}}\n");
  ASSERT_EQ(out.tool_calls.size(), 1u);
  EXPECT_EQ(out.tool_calls[0].arguments, "{\"a\":true}");
}

TEST(ToolCallParser, BrokenBlocksStayInContent) {
  const std::string text = "Hi <tool_call>{not json}</tool_call> there";
  const ParsedOutput broken = parse_tool_calls(text);
  EXPECT_TRUE(broken.tool_calls.empty());
  EXPECT_EQ(broken.content, text);
  const ParsedOutput no_name = parse_tool_calls("<tool_call>{\"arguments\": {}}</tool_call>");
  EXPECT_TRUE(no_name.tool_calls.empty());
  const ParsedOutput mixed = parse_tool_calls("<tool_call>[1]</tool_call><tool_call>{\"name\": \"f\"}</tool_call>");
  ASSERT_EQ(mixed.tool_calls.size(), 1u);
  EXPECT_EQ(mixed.content, "<tool_call>[1]</tool_call>");
  EXPECT_EQ(parse_tool_calls("plain text").content, "plain text");
}

TEST(ToolCallStream, HoldsBackPartialTagAndParsesAtFinish) {
  ToolCallStream s;
  std::string sent;
  for (const char* piece : {"Sure", ", <tool", "_ca", "ll>{\"name\": \"f\", ", "\"arguments\": {\"q\": 1}}", "</tool_call>"})
    sent += s.push(piece);
  EXPECT_EQ(sent, "Sure, ");
  const ParsedOutput out = s.finish();
  ASSERT_EQ(out.tool_calls.size(), 1u);
  EXPECT_EQ(out.tool_calls[0].name, "f");
  EXPECT_EQ(out.tool_calls[0].arguments, "{\"q\":1}");
  EXPECT_EQ(out.content, "");
}

TEST(ToolCallStream, TextThatOnlyLooksLikeATagIsReleased) {
  ToolCallStream s;
  std::string sent = s.push("a <to");
  EXPECT_EQ(sent, "a ");
  sent += s.push("p> b <");
  EXPECT_EQ(sent, "a <top> b ");
  const ParsedOutput out = s.finish();
  EXPECT_TRUE(out.tool_calls.empty());
  EXPECT_EQ(sent + out.content, "a <top> b <");
}

TEST(ToolCallStream, BrokenCallComesBackAsContent) {
  ToolCallStream s;
  EXPECT_EQ(s.push("x<tool_call>{oops"), "x");
  const ParsedOutput out = s.finish();
  EXPECT_TRUE(out.tool_calls.empty());
  EXPECT_EQ(out.content, "<tool_call>{oops");
}

}  // namespace
}  // namespace strata::server
