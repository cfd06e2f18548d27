// openai (gpt-oss harmony): messages to functions.NAME become calls, with or without the
// <|start|> that the prompt may already have written; other messages' markup goes and their
// text stays; a call whose JSON is broken stays content as written; streamed at every split,
// the same.
#include <gtest/gtest.h>

#include "server/tool_parsers/tool_parser_support.h"
#include "strata/server/tool_parsers/families.h"

namespace strata::server {
namespace {

const ToolParser& harmony = harmony_tool_parser();

TEST(HarmonyToolParser, MessagesToFunctionsBecomeCalls) {
  const ParsedOutput out = expect_streams_like_whole(
      harmony,
      "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Tokyo\"}<|call|>"
      "<|start|>assistant to=functions.now<|channel|>commentary json<|message|>{}<|call|>");
  EXPECT_EQ(call_lines(out.tool_calls), (std::vector<std::string>{"get_weather {\"city\":\"Tokyo\"}", "now {}"}));
  EXPECT_EQ(out.content, "");
}

TEST(HarmonyToolParser, OtherMessagesKeepTheirText) {
  const ParsedOutput out = expect_streams_like_whole(
      harmony,
      "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
      "to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Oslo\"}<|call|>");
  EXPECT_EQ(call_lines(out.tool_calls), std::vector<std::string>{"get_weather {\"city\":\"Oslo\"}"});
  EXPECT_EQ(out.content, "Need weather.");
  const ParsedOutput final_only =
      expect_streams_like_whole(harmony, "<|channel|>final<|message|>Hello there.<|return|>");
  EXPECT_TRUE(final_only.tool_calls.empty());
  EXPECT_EQ(final_only.content, "Hello there.");
}

TEST(HarmonyToolParser, BrokenCallsStayContent) {
  const std::string text = "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": <|call|>";
  const ParsedOutput out = expect_streams_like_whole(harmony, text);
  EXPECT_TRUE(out.tool_calls.empty());
  EXPECT_EQ(out.content, text);
  // A marker whose header never reaches <|message|> (within 1 KiB) is text.
  const std::string stray = "<|start|>" + std::string(1500, 'x') + "<|channel|>final<|message|>ok";
  EXPECT_EQ(expect_streams_like_whole(harmony, stray).content, "<|start|>" + std::string(1500, 'x') + "ok");
  EXPECT_EQ(expect_streams_like_whole(harmony, "a <|channel|>b").content, "a <|channel|>b");
}

// A call starts once its header is whole; its arguments follow as written up to <|call|>.
TEST(HarmonyToolParser, ArgumentsStreamAsWritten) {
  EXPECT_EQ(delta_lines(harmony, {"<|channel|>commentary to=functions.get_", "weather <|constrain|>json<|message|>",
                                  "{\"city\": \"To", "kyo\"}<|ca", "ll|>"}),
            (std::vector<std::string>{"0 get_weather", "0 +{\"city\":\"To", "0 +kyo\"}", "0 ."}));
}

}  // namespace
}  // namespace strata::server
