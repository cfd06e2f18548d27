// qwen3_coder: XML calls whose parameter values take the types of the tool's schema (a value
// that does not read as its type stays a string; no schema: strings); a parameter left open
// ends at the next; blocks without a function stay content; streamed at every split, the same.
#include <gtest/gtest.h>

#include "server/tool_parsers/tool_parser_support.h"
#include "strata/server/tool_parsers/families.h"

namespace strata::server {
namespace {

const ToolParser& coder = qwen3_coder_tool_parser();

const nlohmann::ordered_json kTools = nlohmann::ordered_json::parse(R"([
  {"type": "function", "function": {"name": "plan", "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}, "budget": {"type": "number"},
    "hotel": {"type": "boolean"}, "stops": {"type": "array"}, "prefs": {"type": "object"},
    "zip": {"type": "string"}, "note": {"type": ["string", "null"]}}}}}])");

TEST(Qwen3CoderToolParser, ParametersTakeTheirSchemaTypes) {
  const ParsedOutput out = expect_streams_like_whole(
      coder,
      "Planning.\n<tool_call>\n<function=plan>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n"
      "</parameter>\n<parameter=budget>\n99.5\n</parameter>\n<parameter=hotel>\ntrue\n</parameter>\n"
      "<parameter=stops>\n[\"Louvre\", \"Orsay\"]\n</parameter>\n<parameter=prefs>\n{\"food\": \"any\"}\n"
      "</parameter>\n<parameter=zip>\n75001\n</parameter>\n<parameter=note>\nnull\n</parameter>\n</function>\n"
      "</tool_call>",
      kTools);
  EXPECT_EQ(call_lines(out.tool_calls),
            std::vector<std::string>{"plan {\"city\":\"Paris\",\"days\":3,\"budget\":99.5,\"hotel\":true,"
                                     "\"stops\":[\"Louvre\",\"Orsay\"],\"prefs\":{\"food\":\"any\"},\"zip\":\"75001\","
                                     "\"note\":\"null\"}"});
  EXPECT_EQ(out.content, "Planning.");
}

TEST(Qwen3CoderToolParser, UntypedOpenAndMultilineValues) {
  const ParsedOutput out = expect_streams_like_whole(
      coder,
      "<tool_call>\n<function=write>\n<parameter=path>\na.py\n<parameter=code>\ndef f():\n    return 1\n"
      "</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=plan>\n<parameter=days>\nthree\n</parameter>\n"
      "</function>\n</tool_call>",
      kTools);
  EXPECT_EQ(call_lines(out.tool_calls),
            (std::vector<std::string>{"write {\"path\":\"a.py\",\"code\":\"def f():\\n    return 1\"}",
                                      "plan {\"days\":\"three\"}"}));
}

TEST(Qwen3CoderToolParser, BlocksWithoutAFunctionStayContent) {
  for (const char* text : {"<tool_call>{\"name\": \"f\"}</tool_call>", "<tool_call>\n<function=>\n</function>\n</tool_call>",
                           "a <tool_call>\n<function=f"}) {
    const ParsedOutput out = expect_streams_like_whole(coder, text, kTools);
    EXPECT_TRUE(out.tool_calls.empty()) << text;
    EXPECT_EQ(out.content, text);
  }
}

// XML is given as JSON one parameter at a time, once its value is whole (typed by the schema);
// the object closes with the call.
TEST(Qwen3CoderToolParser, ParametersStreamOnceWhole) {
  EXPECT_EQ(delta_lines(coder, {"<tool_call>\n<function=pl", "an>\n<parameter=city>\nPa", "ris\n</param", "eter>\n<parame",
                                "ter=days>\n3\n</parameter>\n<parameter=note>\nx", "\n</parameter>\n</function>\n</tool_call>"},
                        kTools),
            (std::vector<std::string>{"0 plan", "0 +{", "0 +\"city\":\"Paris\"", "0 +,\"days\":3", "0 +,\"note\":\"x\"}",
                                      "0 ."}));
}

}  // namespace
}  // namespace strata::server
