// Client JSON is bounded before anything walks it: nesting past kMaxJsonNesting is a 400 at
// parse time (brackets inside strings do not count), JSON text inside a body (tool-call
// arguments) is bounded the same way, and error messages quote a value briefly whatever its size.
#include <gtest/gtest.h>

#include <chrono>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/server/api_error.h"
#include "strata/server/chat_request.h"
#include "strata/server/json_fields.h"
#include "strata/server/json_parse.h"
#include "strata/server/tool_parsers/families.h"
#include "strata/text/chat_template.h"
#include "strata/text/jinja/value.h"

namespace strata::server {
namespace {

std::string nested(int depth, const std::string& open, const std::string& close, const std::string& inner = "1") {
  std::string out;
  for (int i = 0; i < depth; ++i) out += open;
  out += inner;
  for (int i = 0; i < depth; ++i) out += close;
  return out;
}

// The 400's message, or "ok".
template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    return e.what();
  }
  return "ok";
}

TEST(ParseBody, NestingIsBoundedBeforeParsing) {
  const int limit = kMaxJsonNesting;
  // The body object is one level: kwargs at limit - 1 more levels fits, one more does not.
  const std::string fits = R"({"k": )" + nested(limit - 1, "[", "]") + "}";
  EXPECT_EQ(refusal([&] { parse_body(fits); }), "ok");
  const std::string deep = R"({"k": )" + nested(limit, "[", "]") + "}";
  EXPECT_NE(refusal([&] { parse_body(deep); }).find("nest more than 128 levels deep"), std::string::npos);
  // 100k levels of objects (what overflowed a stack before): refused, not parsed.
  const std::string huge = R"({"k": )" + nested(100000, R"({"a":)", "}") + "}";
  EXPECT_NE(refusal([&] { parse_body(huge); }).find("levels deep"), std::string::npos);
  // Brackets inside strings (escaped quotes too) are text, not nesting.
  const std::string text = R"({"s": ")" + std::string(1000, '[') + R"(\"[[[", "t": "\\"})";
  EXPECT_EQ(refusal([&] { parse_body(text); }), "ok");
  EXPECT_FALSE(parse_json(R"(["[[[[", [[]]])", 3).too_deep);
  EXPECT_TRUE(parse_json(R"(["\"", [[[]]]])", 3).too_deep);
}

// Objects of many keys parse in linear time (nlohmann's own parser into ordered_json is
// quadratic: 40k keys took 14 s), keep their order, and a repeated key keeps its first
// place and its last value.
TEST(ParseJson, ManyKeysLinearOrderedLastValueWins) {
  std::string text = "{";
  for (int i = 0; i < 200000; ++i) text += fmt::format("{}\"k{}\": {}", i == 0 ? "" : ",", i, i);
  text += R"(, "k5": "again", "k199999": null})";
  const auto started = std::chrono::steady_clock::now();
  const ParsedJson parsed = parse_json(text, kMaxJsonNesting);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 5.0);
  ASSERT_TRUE(parsed.value.has_value()) << parsed.error;
  const Json& j = *parsed.value;
  ASSERT_EQ(j.size(), 200000u);
  EXPECT_EQ(j.begin().key(), "k0");
  EXPECT_EQ(j["k5"], "again");
  EXPECT_TRUE(j["k199999"].is_null());
  EXPECT_EQ(std::next(j.begin(), 5).key(), "k5");
  const ParsedJson small = parse_json(R"({"a": 1, "b": [true, {"c": null}], "a": 2})", 8);
  ASSERT_TRUE(small.value.has_value());
  EXPECT_EQ(small.value->dump(), R"({"a":2,"b":[true,{"c":null}]})");
  EXPECT_EQ(*small.value, Json::parse(R"({"a": 2, "b": [true, {"c": null}]})"));
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "1 2", "\"\\ud800\"", "1e999"}) {
    const ParsedJson p = parse_json(bad, 8);
    EXPECT_FALSE(p.value.has_value()) << bad;
    EXPECT_FALSE(p.error.empty()) << bad;
    EXPECT_FALSE(p.too_deep) << bad;
  }
}

TEST(ParseBody, BadJsonMessagesStayShort) {
  const std::string body = R"({"prompt": ")" + std::string(100000, 'x') + "\x01\"}";
  EXPECT_LT(refusal([&] { parse_body(body); }).size(), 400u);
  const std::string overflow = R"({"n": 1)" + std::string(100000, '0') + "}";  // past a double's range
  EXPECT_LT(refusal([&] { parse_body(overflow); }).size(), 400u);
  std::string items = "1";
  for (int i = 0; i < 20000; ++i) items += ",1";
  const Json big = Json::parse(R"({"temperature": [)" + items + "]}");
  EXPECT_LT(refusal([&] { read_number(big, "temperature", 0, 2); }).size(), 200u);
  const Json long_string = Json{{"n", std::string(100000, 'y')}};
  EXPECT_LT(refusal([&] { read_int(long_string, "n", 0, 2); }).size(), 200u);
  EXPECT_EQ(describe(Json::parse("[1, [2]]")), "an array of 2 items");
  EXPECT_EQ(describe(Json("ab")), "\"ab\"");
}

TEST(ParseBody, DeepToolCallArgumentsAreRefused) {
  Json body = Json::parse(R"({"messages": [{"role": "assistant", "content": null, "tool_calls": [
      {"id": "c", "type": "function", "function": {"name": "f", "arguments": ""}}]}]})");
  body["messages"][0]["tool_calls"][0]["function"]["arguments"] = R"({"a": )" + nested(50000, "[", "]") + "}";
  EXPECT_NE(refusal([&] { read_conversation(body); }).find("in the arguments, arrays and objects nest more than 128"), std::string::npos);
}

// Model output is not bounded by the parser: a deep block stays content instead of being dumped.
TEST(ToolCallParser, DeeplyNestedBlockStaysContent) {
  const std::string text = R"(<tool_call>{"name": "f", "arguments": )" + nested(100000, "[", "]") + "}</tool_call>";
  const ParsedOutput out = parse_tool_calls(hermes_tool_parser(), text);
  EXPECT_TRUE(out.tool_calls.empty());
  EXPECT_EQ(out.content, text);
}

// The template's value conversion refuses what it cannot walk safely (an Error, a 400 upstream).
TEST(TemplateValues, DeepJsonIsAnErrorNotACrash) {
  const nlohmann::ordered_json deep = nlohmann::ordered_json::parse(nested(300, "[", "]"));
  EXPECT_THROW(jinja::Value::from_json(deep), Error);
  EXPECT_NO_THROW(jinja::Value::from_json(nlohmann::ordered_json::parse(nested(200, "[", "]"))));
  ChatRenderRequest request;
  request.messages = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "hi"}])");
  request.extra = {{"deep", deep}};
  EXPECT_THROW(render_chat("{{ messages[0].content }}", request), Error);
}

}  // namespace
}  // namespace strata::server
