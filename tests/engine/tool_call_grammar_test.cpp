// The tool-call recogniser behind tool_choice required / named: Hermes blocks of the allowed
// functions (names that prefix each other included) with arguments of their schemas are
// accepted; other names, arguments, text around the blocks and a second call where one is
// allowed are refused at their first byte; where the output may end is reported; token masks
// over the real Qwen3 vocabulary equal brute force.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/engine/json_token_mask.h"
#include "strata/engine/tool_call_grammar.h"
#include "engine/token_mask_test_support.h"
#include "text/tokenizer_fixtures.h"

namespace strata {
namespace {

using Json = nlohmann::ordered_json;

std::shared_ptr<const CompiledSchema> schema(const char* text) { return CompiledSchema::compile(Json::parse(text)); }

ToolCallFormat hermes(bool parallel) {
  ToolCallFormat f{.call_begin = "<tool_call>\n{\"name\": \"",
                   .name_end = "\", \"arguments\": ",
                   .call_end = "}\n</tool_call>",
                   .separator = "\n",
                   .parallel = parallel};
  f.functions = {
      {"get", schema(R"({"type": "object", "properties": {}})")},
      {"get_time", schema(R"({"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]})")},
      {"get_weather", schema(R"({"type": "object", "properties": {"unit": {"enum": ["c", "f"]}}, "required": ["unit"]})")},
  };
  f.check();
  return f;
}

// How many bytes of `text` the grammar takes before refusing one.
size_t accepted_prefix(ToolCallGrammar& g, std::string_view text) {
  size_t i = 0;
  while (i < text.size() && g.feed(static_cast<unsigned char>(text[i]))) ++i;
  return i;
}

constexpr std::string_view kWeather = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"unit\": \"f\"}}\n</tool_call>";
constexpr std::string_view kTime = "<tool_call>\n{\"name\": \"get_time\", \"arguments\": { \"zone\" : \"UTC\" }}\n</tool_call>";
constexpr std::string_view kGet = "<tool_call>\n{\"name\": \"get\", \"arguments\": {}}\n</tool_call>";

TEST(ToolCallGrammar, AcceptsCallsOfTheAllowedFunctions) {
  const ToolCallFormat format = hermes(/*parallel=*/true);
  for (std::string_view call : {kWeather, kTime, kGet}) {
    ToolCallGrammar g(&format);
    EXPECT_FALSE(g.can_end());
    ASSERT_EQ(accepted_prefix(g, call), call.size()) << call;
    EXPECT_TRUE(g.can_end()) << call;
    EXPECT_FALSE(g.done());
    ASSERT_TRUE(g.feed(std::string_view("\n")));
    EXPECT_TRUE(g.can_end());  // a trailing blank may end it too
    ASSERT_TRUE(g.feed(kTime));
    EXPECT_EQ(g.num_calls(), 2);
    EXPECT_TRUE(g.can_end());
  }
}

TEST(ToolCallGrammar, OneCallWhenNotParallel) {
  const ToolCallFormat format = hermes(/*parallel=*/false);
  ToolCallGrammar g(&format);
  ASSERT_TRUE(g.feed(kWeather));
  EXPECT_TRUE(g.done());
  EXPECT_FALSE(g.feed('\n'));
  EXPECT_FALSE(g.feed('<'));
}

TEST(ToolCallGrammar, RefusesAtTheFirstWrongByte) {
  const ToolCallFormat format = hermes(/*parallel=*/true);
  const std::pair<std::string_view, size_t> cases[] = {
      {"Sure! <tool_call>", 0},                                             // text before the call
      {"<tool_call>\n{\"name\": \"get_wind\"", 27},                         // a name not allowed
      {"<tool_call>\n{\"name\": \"get_t\"", 27},                            // a prefix is no name
      {"<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"unit\"", 48},  // another's argument
      {"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"unit\": \"k", 59},  // outside the enum
      {"<tool_call>\n{\"name\": \"get\", \"arguments\": []", 41},            // arguments are an object
      {"<tool_call>\n{\"name\": \"get\", \"arguments\": {}, \"x\"", 43},     // nothing after the arguments
  };
  for (const auto& [text, expected] : cases) {
    ToolCallGrammar g(&format);
    EXPECT_EQ(accepted_prefix(g, text), expected) << text;
  }
  ToolCallGrammar g(&format);
  ASSERT_TRUE(g.feed(kGet));
  EXPECT_FALSE(g.feed(std::string_view("Done.")));  // no text after a call either
  EXPECT_TRUE(g.can_end());                          // and a refused feed changes nothing
}

TEST(ToolCallGrammar, FormatsThatBreakTheInvariantsAreRefused) {
  ToolCallFormat unsorted = hermes(true);
  std::swap(unsorted.functions[0], unsorted.functions[1]);
  EXPECT_THROW(unsorted.check(), Error);
  ToolCallFormat quoted = hermes(true);
  quoted.functions[2].name = "get_\"x";
  EXPECT_THROW(quoted.check(), Error);
  ToolCallFormat array_arguments = hermes(true);
  array_arguments.functions[0].arguments = schema(R"({"type": "array"})");
  EXPECT_THROW(array_arguments.check(), Error);
  ToolCallFormat no_separator = hermes(true);
  no_separator.separator.clear();
  EXPECT_THROW(no_separator.check(), Error);
}

// Mistral's list: "[" once, calls separated by ", ", "]" once; the output ends only after "]".
TEST(ToolCallGrammar, AListOfCallsOpensAndClosesOnce) {
  ToolCallFormat list = hermes(/*parallel=*/true);
  list.calls_begin = "[";
  list.call_begin = "{\"name\": \"";
  list.name_end = "\", \"arguments\": ";
  list.call_end = "}";
  list.separator = ", ";
  list.calls_end = "]";
  list.check();
  const std::string one = R"({"name": "get", "arguments": {}})";
  ToolCallGrammar g(&list);
  ASSERT_TRUE(g.feed("[" + one));
  EXPECT_FALSE(g.can_end());
  EXPECT_FALSE(g.done());
  ASSERT_TRUE(g.feed(", " + one));
  EXPECT_EQ(g.num_calls(), 2);
  ASSERT_TRUE(g.feed(std::string_view("]")));
  EXPECT_TRUE(g.done());
  EXPECT_FALSE(g.feed(std::string_view(",")));
  ToolCallGrammar no_open(&list);
  EXPECT_FALSE(no_open.feed(std::string_view("{")));
  list.parallel = false;
  ToolCallGrammar single(&list);
  ASSERT_TRUE(single.feed("[" + one));
  EXPECT_FALSE(ToolCallGrammar(single).feed(std::string_view(",")));
  ASSERT_TRUE(single.feed(std::string_view("]")));
  EXPECT_TRUE(single.done());
  list.calls_end = ",]";
  EXPECT_THROW(list.check(), Error);
}

TEST(ToolCallGrammar, MasksEqualBruteForceOnTheQwen3Vocabulary) {
  const text::Tokenizer& tokenizer = test::fixture_tokenizer("qwen3");
  const JsonTokenMask mask(tokenizer);
  const ToolCallFormat format = hermes(/*parallel=*/true);
  for (std::string_view prefix : {std::string_view(""), std::string_view("<tool_call>\n{\"name\": \"get"),
                                  std::string_view("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"u"),
                                  kTime}) {
    ToolCallGrammar state(&format);
    ASSERT_TRUE(state.feed(prefix)) << prefix;
    EXPECT_GT(test::expect_mask_is_brute_force(tokenizer, mask, state, prefix), 0) << prefix;
  }
}

}  // namespace
}  // namespace strata
