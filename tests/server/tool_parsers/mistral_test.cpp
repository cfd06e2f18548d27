// mistral: [TOOL_CALLS] with a JSON list, or name[ARGS]{...} repeated; ids are 9
// alphanumerics; broken lists and names stay content; streamed at every split, the same.
#include <gtest/gtest.h>

#include "server/tool_parsers/tool_parser_support.h"
#include "strata/server/tool_parsers/families.h"

namespace strata::server {
namespace {

const ToolParser& mistral = mistral_tool_parser();

TEST(MistralToolParser, JsonListBecomesCalls) {
  const ParsedOutput out = expect_streams_like_whole(
      mistral, "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, "
               "{\"name\": \"now\", \"arguments\": {}}]");
  EXPECT_EQ(call_lines(out.tool_calls), (std::vector<std::string>{"get_weather {\"city\":\"Paris\"}", "now {}"}));
  EXPECT_EQ(out.content, "");
  ASSERT_EQ(out.tool_calls[0].id.size(), 9u);
  for (char c : out.tool_calls[0].id) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << out.tool_calls[0].id;
}

TEST(MistralToolParser, NameArgsFormBecomesCalls) {
  const ParsedOutput out = expect_streams_like_whole(
      mistral, "Checking.[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\", \"unit\": \"c\"}[TOOL_CALLS]now[ARGS]{}");
  EXPECT_EQ(call_lines(out.tool_calls),
            (std::vector<std::string>{"get_weather {\"city\":\"Paris\",\"unit\":\"c\"}", "now {}"}));
  EXPECT_EQ(out.content, "Checking.");
}

TEST(MistralToolParser, NotCallsStayContent) {
  for (const char* text : {"[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {}", "[TOOL_CALLS] [1, 2]",
                           "[TOOL_CALLS] [{\"arguments\": {}}]", "[TOOL_CALLS]not a name[ARGS]{}",
                           "[TOOL_CALLS]f[ARGS]{\"a\": ]}", "[TOOL_CALLS]f[ARGS]{\"a\": 1"}) {
    const ParsedOutput out = expect_streams_like_whole(mistral, text);
    EXPECT_TRUE(out.tool_calls.empty()) << text;
    EXPECT_EQ(out.content, text);
  }
}

// In the list form each item's call starts once its arguments key has come (the list's calls
// close with the list); in the [ARGS] form once [ARGS] has come.
TEST(MistralToolParser, ArgumentsStreamAsWritten) {
  EXPECT_EQ(delta_lines(mistral, {"[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa",
                                  "ris\"}}, {\"name\": \"now\", \"argu", "ments\": {}}]"}),
            (std::vector<std::string>{"0 get_weather", "0 +{\"city\":\"Pa", "0 +ris\"}", "0 .", "1 now", "1 +{}",
                                      "1 ."}));
  EXPECT_EQ(delta_lines(mistral, {"[TOOL_CALLS]get_weather[AR", "GS]{\"city\": \"Pa", "ris\"}[TOOL_CALLS]now[ARGS]{}"}),
            (std::vector<std::string>{"0 get_weather", "0 +{\"city\":\"Pa", "0 +ris\"}", "0 .", "1 now", "1 +{}",
                                      "1 ."}));
}

}  // namespace
}  // namespace strata::server
