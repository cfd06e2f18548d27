// llama3_json: {"name", "parameters"} objects, after <|python_tag|> or not, several split by
// ";", text before them content; JSON without a parameters key, broken JSON and a call cut
// short stay content; streamed at every split, the same content and calls.
#include <gtest/gtest.h>

#include "server/tool_parsers/tool_parser_support.h"
#include "strata/server/tool_parsers/families.h"

namespace strata::server {
namespace {

const ToolParser& llama = llama3_json_tool_parser();

TEST(Llama3JsonToolParser, ObjectsSeparatedBySemicolonsBecomeCalls) {
  const ParsedOutput out = expect_streams_like_whole(
      llama, "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}; "
             "{\"name\": \"now\", \"parameters\": {}}");
  EXPECT_EQ(call_lines(out.tool_calls),
            (std::vector<std::string>{"get_weather {\"city\":\"Paris\"}", "now {}"}));
  EXPECT_EQ(out.content, "");
  EXPECT_EQ(out.tool_calls[0].id.substr(0, 5), "call_");
}

TEST(Llama3JsonToolParser, PlainObjectAfterText) {
  const ParsedOutput out = expect_streams_like_whole(
      llama, "I will look.\n{\"name\": \"search\", \"parameters\": {\"q\": \"a;b}\", \"n\": 3}}");
  EXPECT_EQ(call_lines(out.tool_calls), std::vector<std::string>{"search {\"q\":\"a;b}\",\"n\":3}"});
  EXPECT_EQ(out.content, "I will look.");
}

TEST(Llama3JsonToolParser, NotCallsStayContent) {
  for (const char* text : {"The user is {\"name\": \"Bob\"} here.", "{\"name\": \"f\", \"parameters\": {\"a\": }}",
                           "<|python_tag|>{\"name\": \"f\", \"parameters\": {\"a\": 1}", "{\"name\": 5, \"parameters\": {}}",
                           "<|python_tag|>print(1)"}) {
    const ParsedOutput out = expect_streams_like_whole(llama, text);
    EXPECT_TRUE(out.tool_calls.empty()) << text;
    EXPECT_EQ(out.content, text);
  }
}

// The call starts once its parameters key has come (JSON in prose with only a name stays
// content); pieces follow as written; the call settles when what follows it is known.
TEST(Llama3JsonToolParser, ArgumentsStreamAsWritten) {
  EXPECT_EQ(delta_lines(llama, {"<|python_tag|>{\"name\": \"get_weather\", ", "\"parameters\": {\"ci", "ty\": \"Paris\"}",
                                "}; {\"name\": \"now\", \"parameters\": {}}"}),
            (std::vector<std::string>{"0 get_weather", "0 +{\"ci", "0 +ty\":\"Paris\"}", "0 .", "1 now", "1 +{}",
                                      "1 ."}));
}

}  // namespace
}  // namespace strata::server
