// deepseek_v3: a group of calls with fenced JSON arguments (V3) or bare JSON (V3.1), text
// before it content; a group with anything but whole calls stays content; streamed at every
// split, the same.
#include <gtest/gtest.h>

#include "server/tool_parsers/tool_parser_support.h"
#include "strata/server/tool_parsers/families.h"

namespace strata::server {
namespace {

const ToolParser& deepseek = deepseek_v3_tool_parser();

TEST(DeepSeekV3ToolParser, FencedCallsInAGroup) {
  const ParsedOutput out = expect_streams_like_whole(
      deepseek,
      "Let me see.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
      "{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>now\n```json\n{}\n```"
      "<｜tool▁call▁end｜><｜tool▁calls▁end｜>");
  EXPECT_EQ(call_lines(out.tool_calls), (std::vector<std::string>{"get_weather {\"city\":\"Paris\"}", "now {}"}));
  EXPECT_EQ(out.content, "Let me see.");
}

TEST(DeepSeekV3ToolParser, V31CallsAndAGroupLeftOpen) {
  const ParsedOutput out = expect_streams_like_whole(
      deepseek, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{\"q\": \"x\"}<｜tool▁call▁end｜>");
  EXPECT_EQ(call_lines(out.tool_calls), std::vector<std::string>{"search {\"q\":\"x\"}"});
}

TEST(DeepSeekV3ToolParser, BrokenGroupsStayContent) {
  for (const char* text : {"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": }\n```"
                           "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                           "<｜tool▁calls▁begin｜>hello<｜tool▁calls▁end｜> after",
                           "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": 1"}) {
    const ParsedOutput out = expect_streams_like_whole(deepseek, text);
    EXPECT_TRUE(out.tool_calls.empty()) << text;
    EXPECT_EQ(out.content, text);
  }
}

// A call starts once its name's line and the fence are whole, and its arguments follow as
// written; the fence's end and the markers are never part of them; the calls close with the group.
TEST(DeepSeekV3ToolParser, ArgumentsStreamAsWritten) {
  EXPECT_EQ(delta_lines(deepseek, {"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_wea", "ther\n``",
                                   "`json\n{\"city\": \"Pa", "ris\"}\n``", "`<｜tool▁call▁end｜><｜tool▁call▁begin｜>now<｜tool▁sep｜>{",
                                   "}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"}),
            (std::vector<std::string>{"0 get_weather", "0 +{\"city\":\"Pa", "0 +ris\"}", "1 now", "1 +{", "0 .",
                                      "1 +}", "1 ."}));
}

}  // namespace
}  // namespace strata::server
