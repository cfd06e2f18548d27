// tool_choice and parallel_tool_calls as the chat route reads them: auto and none force
// nothing; required forces one of the tools (several calls unless parallel_tool_calls is
// false), a named function exactly one call of it; the forced format, in each forceable
// parser's own format, is what that parser reads back; malformed choices, unknown names,
// forced calls without tools, unenforceable strict schemas and choices a format cannot force
// are 400s naming the field; qwen3_coder's XML calls are forced through a grammar.
#include <gtest/gtest.h>

#include "strata/engine/grammar_state.h"
#include "strata/server/api_error.h"
#include "strata/server/tool_choice.h"
#include "strata/server/tool_parsers/families.h"

namespace strata::server {
namespace {

const Json kTools = Json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
    "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
  {"type": "function", "function": {"name": "add", "parameters": {"type": "object",
    "properties": {"a": {"type": "integer", "multipleOf": 2}}}}},
  {"type": "function", "function": {"name": "ping"}}])");

ToolChoice read(const char* choice, const Json& tools = kTools, const ToolParser& parser = hermes_tool_parser()) {
  Json body = Json::parse(choice);
  ToolChoice read = read_tool_choice(body, tools);
  force_tool_calls(parser, tools, read);
  return read;
}

std::string refused_param(const char* choice, const Json& tools = kTools,
                          const ToolParser& parser = hermes_tool_parser()) {
  try {
    read(choice, tools, parser);
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

// What the forced grammar accepts, after the prompt's prefix, is what the parser turns into a
// call, in each format that can be forced.
TEST(ToolChoice, TheForcedFormatIsWhatTheParserReads) {
  struct Case {
    const ToolParser& parser;
    std::string output;
  };
  const Case cases[] = {
      {hermes_tool_parser(), "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"},
      {llama3_json_tool_parser(), "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}"},
      {mistral_tool_parser(), "[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]"},
      {deepseek_v3_tool_parser(), "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
                                  "{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
  };
  for (const Case& c : cases) {
    const ToolChoice named =
        read(R"({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}})", kTools, c.parser);
    ToolCallGrammar g(named.forced.get());
    ASSERT_TRUE(g.feed(c.output)) << c.parser.name();
    EXPECT_TRUE(g.done() || g.can_end()) << c.parser.name();
    const ParsedOutput parsed = parse_tool_calls(c.parser, named.forced_prefix + c.output);
    ASSERT_EQ(parsed.tool_calls.size(), 1u) << c.parser.name();
    EXPECT_EQ(parsed.tool_calls[0].name, "get_weather");
    EXPECT_EQ(parsed.tool_calls[0].arguments, R"({"city":"Paris"})");
    EXPECT_TRUE(parsed.content.empty());
  }
  EXPECT_EQ(read(R"({"tool_choice": "required"})", kTools, mistral_tool_parser()).forced_prefix, "[TOOL_CALLS]");
}

// Several calls where parallel: llama3_json's "; " and Mistral's list.
TEST(ToolChoice, ParallelForcedCallsAreReadBack) {
  const ToolChoice llama = read(R"({"tool_choice": "required"})", kTools, llama3_json_tool_parser());
  const std::string two = R"({"name": "ping", "parameters": {}}; {"name": "add", "parameters": {"a": 1}})";
  ToolCallGrammar g(llama.forced.get());
  ASSERT_TRUE(g.feed(two));
  EXPECT_TRUE(g.can_end());
  EXPECT_EQ(parse_tool_calls(llama3_json_tool_parser(), two).tool_calls.size(), 2u);
  const ToolChoice mistral = read(R"({"tool_choice": "required"})", kTools, mistral_tool_parser());
  const std::string list = R"([{"name": "ping", "arguments": {}}, {"name": "add", "arguments": {"a": 1}}])";
  ToolCallGrammar m(mistral.forced.get());
  ASSERT_TRUE(m.feed(list));
  EXPECT_TRUE(m.done());
  EXPECT_EQ(parse_tool_calls(mistral_tool_parser(), mistral.forced_prefix + list).tool_calls.size(), 2u);
}

// A choice among several tools cannot be forced in harmony (special tokens between a call's
// parts): a 400 that names the parser, never an unforced answer.
TEST(ToolChoice, FormatsThatCannotBeForcedAreRefused) {
  for (const auto& [parser, choice] : {std::pair{&harmony_tool_parser(), R"({"tool_choice": "required"})"}}) {
    try {
      read(choice, kTools, *parser);
      ADD_FAILURE() << parser->name() << " forced " << choice;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      EXPECT_EQ(e.param, "tool_choice");
      EXPECT_NE(std::string(e.what()).find("--tool-call-parser " + std::string(parser->name())), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(refused_param(R"({"tool_choice": "auto"})", kTools, *parser), "ok");
  }
}

// qwen3_coder: "required" allows any of the tools, several unless parallel_tool_calls is
// false; a named function only that one, once; the parser reads the calls back.
TEST(ToolChoice, Qwen3CoderCallsAreForcedByAGrammar) {
  const std::string weather = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>";
  const std::string add = "<tool_call>\n<function=add>\n<parameter=a>\n4\n</parameter>\n</function>\n</tool_call>";
  const auto accepts = [](const ToolChoice& choice, const std::string& text) {
    GrammarState g(choice.forced_grammar.get());
    return g.feed(text) && g.can_end();
  };
  const ToolChoice required = read(R"({"tool_choice": "required"})", kTools, qwen3_coder_tool_parser());
  ASSERT_TRUE(required.forced_grammar);
  EXPECT_FALSE(required.forced);
  EXPECT_TRUE(accepts(required, weather + "\n" + add));
  const ParsedOutput both = parse_tool_calls(qwen3_coder_tool_parser(), weather + "\n" + add, kTools);
  ASSERT_EQ(both.tool_calls.size(), 2u);
  EXPECT_EQ(both.tool_calls[0].name + both.tool_calls[0].arguments, R"(get_weather{"city":"Paris"})");
  EXPECT_EQ(both.tool_calls[1].name + both.tool_calls[1].arguments, R"(add{"a":4})");
  EXPECT_TRUE(accepts(required, weather.substr(0, 54) + "<b>" + weather.substr(54)));
  EXPECT_FALSE(accepts(required, weather.substr(0, 54) + "</b>" + weather.substr(54)));  // could end its markup
  const ToolChoice one = read(R"({"tool_choice": "required", "parallel_tool_calls": false})", kTools,
                              qwen3_coder_tool_parser());
  EXPECT_TRUE(accepts(one, add));
  EXPECT_FALSE(accepts(one, weather + "\n" + add));
  const ToolChoice named = read(R"({"tool_choice": {"type": "function", "function": {"name": "add"}}})", kTools,
                                qwen3_coder_tool_parser());
  EXPECT_TRUE(accepts(named, add));
  EXPECT_FALSE(accepts(named, weather));
  EXPECT_FALSE(accepts(named, add + "\n" + add));
}

// gpt-oss: one call of a known function (named, or the only tool with "required") is forced
// by ending the prompt with its header; the decoder writes the arguments alone.
TEST(ToolChoice, HarmonyForcesOneCallByItsHeader) {
  const ToolChoice named =
      read(R"({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}})", kTools, harmony_tool_parser());
  EXPECT_FALSE(named.forced);
  ASSERT_TRUE(named.forced_arguments);
  EXPECT_EQ(named.forced_prefix, "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>");
  JsonSchemaGrammar g(named.forced_arguments.get());
  ASSERT_TRUE(g.feed(std::string_view(R"({"city": "Paris"})")));
  EXPECT_TRUE(g.done());
  const ParsedOutput parsed = parse_tool_calls(harmony_tool_parser(), named.forced_prefix + R"({"city": "Paris"})");
  ASSERT_EQ(parsed.tool_calls.size(), 1u);
  EXPECT_EQ(parsed.tool_calls[0].name, "get_weather");
  EXPECT_EQ(parsed.tool_calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(parsed.content, "");
  const ToolChoice only = read(R"({"tool_choice": "required"})", Json::array({kTools[2]}), harmony_tool_parser());
  EXPECT_EQ(only.forced_prefix, "<|channel|>commentary to=functions.ping <|constrain|>json<|message|>");
}

// `multipleOf` is not enforced by the compiler: any object then, unless the function is strict.
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
