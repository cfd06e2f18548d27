// hermes: <tool_call> blocks anywhere in the text become calls with call_ ids; an unclosed
// final block is read; broken blocks stay content as written; streamed at every split, the
// same content and calls; a tail that only looks like a tag is released.
#include <gtest/gtest.h>

#include "server/tool_parsers/tool_parser_support.h"
#include "strata/server/tool_call_stream.h"
#include "strata/server/tool_parsers/families.h"

namespace strata::server {
namespace {

const ToolParser& hermes = hermes_tool_parser();

TEST(HermesToolParser, BlocksBecomeCalls) {
  const ParsedOutput out = expect_streams_like_whole(
      hermes,
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n"
      "</tool_call>\n<tool_call>{\"name\": \"now\", \"arguments\": {}}</tool_call>");
  EXPECT_EQ(call_lines(out.tool_calls),
            (std::vector<std::string>{"get_weather {\"city\":\"Paris\",\"days\":2}", "now {}"}));  // key order kept
  EXPECT_EQ(out.content, "Let me check.");
  EXPECT_EQ(out.tool_calls[0].id.substr(0, 5), "call_");
  EXPECT_EQ(out.tool_calls[0].id.size(), 29u);
  EXPECT_NE(out.tool_calls[0].id, out.tool_calls[1].id);
}

TEST(HermesToolParser, StringArgumentsAndParametersKey) {
  const ParsedOutput a =
      expect_streams_like_whole(hermes, "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 1}\"}</tool_call>");
  EXPECT_EQ(call_lines(a.tool_calls), std::vector<std::string>{"f {\"x\": 1}"});
  const ParsedOutput b =
      expect_streams_like_whole(hermes, "<tool_call>{\"name\": \"g\", \"parameters\": {\"y\": [1]}}</tool_call>");
  EXPECT_EQ(call_lines(b.tool_calls), std::vector<std::string>{"g {\"y\":[1]}"});
  EXPECT_EQ(b.content, "");
}

TEST(HermesToolParser, UnclosedFinalBlockIsRead) {
  const ParsedOutput out =
      expect_streams_like_whole(hermes, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": true}}\n");
  EXPECT_EQ(call_lines(out.tool_calls), std::vector<std::string>{"f {\"a\":true}"});
}

TEST(HermesToolParser, BrokenBlocksStayInContent) {
  const std::string text = "Hi <tool_call>{not json}</tool_call> there";
  const ParsedOutput broken = expect_streams_like_whole(hermes, text);
  EXPECT_TRUE(broken.tool_calls.empty());
  EXPECT_EQ(broken.content, text);
  EXPECT_TRUE(expect_streams_like_whole(hermes, "<tool_call>{\"arguments\": {}}</tool_call>").tool_calls.empty());
  const ParsedOutput mixed =
      expect_streams_like_whole(hermes, "<tool_call>[1]</tool_call><tool_call>{\"name\": \"f\"}</tool_call>");
  EXPECT_EQ(call_lines(mixed.tool_calls), std::vector<std::string>{"f {}"});
  EXPECT_EQ(mixed.content, "<tool_call>[1]</tool_call>");
  EXPECT_EQ(expect_streams_like_whole(hermes, "plain text").content, "plain text");
  EXPECT_EQ(expect_streams_like_whole(hermes, "x<tool_call>{oops").content, "x<tool_call>{oops");
}

TEST(HermesToolParser, StreamHoldsBackAPartialTagAndGivesTheCallWhenWhole) {
  ToolCallStream s(hermes, nullptr);
  EXPECT_EQ(s.push("Sure").content, "Sure");
  EXPECT_EQ(s.push(", <tool").content, ", ");
  EXPECT_EQ(s.push("_ca").content, "");
  EXPECT_TRUE(s.push("ll>{\"name\": \"f\", \"arguments\": {\"q\": 1}}").calls.empty());
  const ToolStreamStep closed = s.push("</tool_call>");
  EXPECT_EQ(call_lines(closed.calls), std::vector<std::string>{"f {\"q\":1}"});
  EXPECT_EQ(s.push(" after").content, " after");
  const ToolStreamStep end = s.finish();
  EXPECT_TRUE(end.calls.empty());
  EXPECT_EQ(end.content, "");
}

TEST(HermesToolParser, TextThatOnlyLooksLikeATagIsReleased) {
  ToolCallStream s(hermes, nullptr);
  std::string sent = s.push("a <to").content;
  EXPECT_EQ(sent, "a ");
  sent += s.push("p> b <").content;
  EXPECT_EQ(sent, "a <top> b ");
  EXPECT_EQ(sent + s.finish().content, "a <top> b <");
}

// Arguments go out as written, without the blanks between tokens: cut inside a string, after
// a backslash (the escape's other half follows) and inside the closing tag.
TEST(HermesToolParser, ArgumentsStreamAsWritten) {
  EXPECT_EQ(delta_lines(hermes, {"<tool_", "call>\n{\"name\": \"get_", "weather\", \"arguments\": {\"city\": \"Pa",
                                 "ris \\", "\"x\\\"\", \"days\": 2", "}}\n</tool_", "call>"}),
            (std::vector<std::string>{"0 get_weather", "0 +{\"city\":\"Pa", "0 +ris \\", "0 +\"x\\\"\",\"days\":2",
                                      "0 +}", "0 ."}));
}

// A character cut between its bytes is held until it is whole; parallel calls count up.
TEST(HermesToolParser, SplitCharactersWaitAndCallsCountUp) {
  EXPECT_EQ(delta_lines(hermes, {"<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"caf\xC3", "\xA9\"}}</tool_call>",
                                 "\n<tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call>"}),
            (std::vector<std::string>{"0 f", "0 +{\"a\":\"caf", "0 +\xC3\xA9\"}", "0 .", "1 g", "1 +{}", "1 ."}));
}

// String arguments go out once whole; a block that turns out broken closes its call (the
// whole parse keeps that text as content).
TEST(HermesToolParser, StringArgumentsWholeAndBrokenCallsClose) {
  EXPECT_EQ(delta_lines(hermes, {"<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"x\\\"", ": 1}\"}</tool_call>"}),
            (std::vector<std::string>{"0 f", "0 +{\"x\": 1}", "0 ."}));
  EXPECT_EQ(delta_lines(hermes, {"<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1", "}} oops</tool_call>"}),
            (std::vector<std::string>{"0 f", "0 +{\"a\":1", "0 ."}));
}

}  // namespace
}  // namespace strata::server
