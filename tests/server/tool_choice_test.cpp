// tool_choice and parallel_tool_calls as the chat route reads them: auto and none force
// nothing; required forces one of the tools (several calls unless parallel_tool_calls is
// false), a named function exactly one call of it; the forced format holds the Hermes blocks
// the parser reads; malformed choices, unknown names, forced calls without tools and
// unenforceable strict schemas are 400s naming the field.
#include <gtest/gtest.h>

#include "strata/server/api_error.h"
#include "strata/server/tool_call_parser.h"
#include "strata/server/tool_choice.h"

namespace strata::server {
namespace {

const Json kTools = Json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
    "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
  {"type": "function", "function": {"name": "add", "parameters": {"type": "object",
    "properties": {"a": {"type": "integer", "minimum": 0}}}}},
  {"type": "function", "function": {"name": "ping"}}])");

ToolChoice read(const char* choice, const Json& tools = kTools) {
  Json body = Json::parse(choice);
  return read_tool_choice(body, tools);
}

std::string refused_param(const char* choice, const Json& tools = kTools) {
  try {
    read(choice, tools);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    return e.param;
  }
  return "ok";
}

TEST(ToolChoice, AutoAndNoneForceNothing) {
  EXPECT_EQ(read("{}").mode, ToolChoiceMode::kAuto);
  EXPECT_EQ(read(R"({"tool_choice": "auto"})").mode, ToolChoiceMode::kAuto);
  EXPECT_EQ(read(R"({"tool_choice": "none"})", Json()).mode, ToolChoiceMode::kNone);
  EXPECT_FALSE(read(R"({"tool_choice": "auto", "parallel_tool_calls": false})").parallel);
  EXPECT_FALSE(read(R"({"tool_choice": "none"})").forced);
}

TEST(ToolChoice, RequiredForcesAnyToolNamedForcesOneCall) {
  const ToolChoice required = read(R"({"tool_choice": "required"})");
  ASSERT_TRUE(required.forced);
  ASSERT_EQ(required.forced->functions.size(), 3u);
  EXPECT_EQ(required.forced->functions[0].name, "add");  // sorted
  EXPECT_TRUE(required.forced->parallel);
  EXPECT_FALSE(read(R"({"tool_choice": "required", "parallel_tool_calls": false})").forced->parallel);
  const ToolChoice named = read(R"({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}})");
  ASSERT_TRUE(named.forced);
  ASSERT_EQ(named.forced->functions.size(), 1u);
  EXPECT_EQ(named.forced->functions[0].name, "get_weather");
  EXPECT_FALSE(named.forced->parallel);
}

// What the forced grammar accepts is what the parser turns into a call.
TEST(ToolChoice, TheForcedFormatIsWhatTheParserReads) {
  const ToolChoice named = read(R"({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}})");
  ToolCallGrammar g(named.forced.get());
  const std::string text = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
  ASSERT_TRUE(g.feed(text));
  EXPECT_TRUE(g.done());
  const ParsedOutput parsed = parse_tool_calls(text);
  ASSERT_EQ(parsed.tool_calls.size(), 1u);
  EXPECT_EQ(parsed.tool_calls[0].name, "get_weather");
  EXPECT_EQ(parsed.tool_calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_TRUE(parsed.content.empty());
}

// `minimum` is not enforced by the compiler: any object then, unless the function is strict.
TEST(ToolChoice, UnenforceableSchemasAreAnyObjectUnlessStrict) {
  const ToolChoice named = read(R"({"tool_choice": {"type": "function", "function": {"name": "add"}}})");
  ToolCallGrammar g(named.forced.get());
  EXPECT_TRUE(g.feed(std::string_view("<tool_call>\n{\"name\": \"add\", \"arguments\": {\"b\": [true]}}")));
  Json strict = kTools;
  strict[1]["function"]["strict"] = true;
  EXPECT_EQ(refused_param(R"({"tool_choice": "required"})", strict), "tools");
  EXPECT_EQ(refused_param(R"({"tool_choice": "auto"})", strict), "ok");  // nothing is enforced then
}

TEST(ToolChoice, RefusalsNameTheField) {
  for (const char* bad : {R"({"tool_choice": "sometimes"})", R"({"tool_choice": 1})", R"({"tool_choice": {}})",
                          R"({"tool_choice": {"type": "function"}})",
                          R"({"tool_choice": {"type": "function", "function": {"name": 5}}})",
                          R"({"tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "auto"}}})",
                          R"({"tool_choice": {"type": "function", "function": {"name": "nope"}}})"})
    EXPECT_EQ(refused_param(bad), "tool_choice") << bad;
  EXPECT_EQ(refused_param(R"({"tool_choice": "required"})", Json()), "tool_choice");
  EXPECT_EQ(refused_param(R"({"tool_choice": "auto"})", Json()), "ok");
  EXPECT_EQ(refused_param(R"({"tool_choice": "required", "parallel_tool_calls": 1})"), "parallel_tool_calls");
  Json twice = kTools;
  twice.push_back(kTools[0]);
  EXPECT_EQ(refused_param(R"({"tool_choice": "required"})", twice), "tools");
  Json quoted = kTools;
  quoted[0]["function"]["name"] = "say \"hi\"";
  EXPECT_EQ(refused_param(R"({"tool_choice": "required"})", quoted), "tools");
}

}  // namespace
}  // namespace strata::server
