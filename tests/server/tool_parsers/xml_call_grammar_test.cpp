// The grammar of forced qwen3_coder calls: parameters in the schema's order, required ones
// always and optional ones maybe, values of their property's type (integers, numbers,
// booleans, enums, JSON objects and arrays, free text without markup); several calls only
// when parallel; names the markup cannot hold, and keywords it does not enforce in a strict
// function, refused.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/engine/gbnf_compiler.h"
#include "strata/engine/grammar_state.h"
#include "strata/server/tool_parsers/families.h"
#include "strata/server/tool_parsers/xml_call_grammar.h"

namespace strata::server {
namespace {

using Json = nlohmann::ordered_json;

const Json kFunctions = Json::parse(R"([{"name": "plan", "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}, "budget": {"type": "number"},
    "hotel": {"type": "boolean"}, "unit": {"type": "string", "enum": ["c", "f"]}, "prefs": {"type": "object"},
    "stops": {"type": "array"}}, "required": ["city", "days"]}},
  {"name": "free"}])");

std::string call(const std::string& function, const std::vector<std::pair<std::string, std::string>>& parameters) {
  std::string text = "<tool_call>\n<function=" + function + ">";
  for (const auto& [key, value] : parameters) text += "\n<parameter=" + key + ">\n" + value + "\n</parameter>";
  return text + "\n</function>\n</tool_call>";
}

bool accepts(const std::string& text, bool parallel = true) {
  const auto grammar = compile_gbnf(xml_calls_gbnf(kFunctions, parallel));
  GrammarState state(grammar.get());
  return state.feed(text) && state.can_end();
}

TEST(XmlCallGrammar, ValuesFollowTheirTypes) {
  const std::string all = call("plan", {{"city", "New\nYork"}, {"days", "-3"}, {"budget", "99.5"}, {"hotel", "true"},
                                        {"unit", "f"}, {"prefs", R"({"food": ["any", 1]})"}, {"stops", "[]"}});
  EXPECT_TRUE(accepts(all));
  const Json tools = Json::array({{{"type", "function"}, {"function", kFunctions[0]}}});
  const ParsedOutput read = parse_tool_calls(qwen3_coder_tool_parser(), all, tools);
  ASSERT_EQ(read.tool_calls.size(), 1u);
  EXPECT_EQ(read.tool_calls[0].arguments,
            R"({"city":"New\nYork","days":-3,"budget":99.5,"hotel":true,"unit":"f","prefs":{"food":["any",1]},"stops":[]})");
  EXPECT_TRUE(accepts(call("plan", {{"city", "Paris"}, {"days", "2"}})));  // the optional ones left out
  EXPECT_FALSE(accepts(call("plan", {{"city", "Paris"}, {"days", "two"}})));
  EXPECT_FALSE(accepts(call("plan", {{"city", "Paris"}, {"days", "2"}, {"unit", "k"}})));
  EXPECT_FALSE(accepts(call("plan", {{"city", "Paris"}, {"days", "2"}, {"prefs", "[1]"}})));
  EXPECT_FALSE(accepts(call("plan", {{"days", "2"}, {"city", "Paris"}})));  // the schema's order
  EXPECT_FALSE(accepts(call("plan", {{"city", "Paris"}})));                 // days is required
  EXPECT_FALSE(accepts(call("plan", {{"city", "Paris"}, {"days", "2"}, {"zip", "1"}})));
  EXPECT_FALSE(accepts(call("nope", {})));
}

TEST(XmlCallGrammar, FunctionsWithoutPropertiesTakeAnyParameters) {
  EXPECT_TRUE(accepts(call("free", {})));
  EXPECT_TRUE(accepts(call("free", {{"path", "a.py"}, {"code", "if a < b:\n    pass"}})));
  EXPECT_FALSE(accepts(call("free", {{"code", "x </parameter> y"}})));
}

TEST(XmlCallGrammar, SeveralCallsOnlyWhenParallel) {
  const std::string two = call("free", {}) + "\n" + call("plan", {{"city", "Oslo"}, {"days", "1"}});
  EXPECT_TRUE(accepts(two));
  EXPECT_FALSE(accepts(two, /*parallel=*/false));
  EXPECT_TRUE(accepts(call("free", {}), /*parallel=*/false));
}

TEST(XmlCallGrammar, StrictFunctionsRefuseKeywordsTheGrammarDoesNotEnforce) {
  const Json bounded = Json::parse(R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}})");
  EXPECT_NO_THROW(xml_calls_gbnf(Json::array({{{"name", "f"}, {"parameters", bounded}}}), true));
  try {
    xml_calls_gbnf(Json::array({{{"name", "f"}, {"parameters", bounded}, {"strict", true}}}), true);
    ADD_FAILURE() << "a strict function with minimum was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'n.minimum' would not hold"), std::string::npos) << e.what();
  }
  const Json plain = Json::parse(R"({"type": "object", "properties": {"n": {"type": "integer", "description": "d"}},
                                     "required": ["n"], "additionalProperties": false})");
  EXPECT_NO_THROW(xml_calls_gbnf(Json::array({{{"name", "f"}, {"parameters", plain}, {"strict", true}}}), true));
}

TEST(XmlCallGrammar, NamesTheMarkupCannotHoldAreRefused) {
  EXPECT_THROW(xml_calls_gbnf(Json::parse(R"([{"name": "a>b"}])"), true), Error);
  EXPECT_THROW(xml_calls_gbnf(Json::parse(R"([{"name": "f", "parameters": {"properties": {"x<y": {}}}}])"), true),
               Error);
}

}  // namespace
}  // namespace strata::server
