// ToolCallStream on damaged calls: every parser's well-formed calls with bytes deleted,
// inserted or repeated (a seeded generator, the same texts each run) still stream at every
// split to the content and calls of the whole parse, and every call the stream ends with got
// deltas that add up to its arguments exactly (tool_parser_support checks both).
#include <random>

#include <gtest/gtest.h>

#include "server/tool_parsers/tool_parser_support.h"
#include "strata/server/tool_parsers/families.h"

namespace strata::server {
namespace {

const nlohmann::ordered_json kTools = nlohmann::ordered_json::parse(R"([{"type": "function", "function": {
    "name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}}}])");

struct Sample {
  const ToolParser& parser;
  std::string text;
  size_t num_calls = 2;  // intact
};

std::vector<Sample> samples() {
  return {
      {hermes_tool_parser(), "a <tool_call>\n{\"name\": \"f\", \"arguments\": {\"s\": \"x\\\"y\", \"n\": [1, {}]}}\n"
                             "</tool_call>\n<tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call> b"},
      {llama3_json_tool_parser(), "<|python_tag|>{\"name\": \"f\", \"parameters\": {\"s\": \"é\"}}; "
                                  "{\"name\": \"g\", \"parameters\": {\"n\": 2}}"},
      {mistral_tool_parser(), "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"n\": 1}}, {\"name\": \"g\", "
                              "\"arguments\": {\"s\": \"t\"}}]"},
      {mistral_tool_parser(), "x[TOOL_CALLS]f[ARGS]{\"n\": 1}[TOOL_CALLS]g[ARGS]{\"s\": \"]\"}"},
      {deepseek_v3_tool_parser(), "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n"
                                  "{\"n\": 1}\n```<｜tool▁call▁end｜><｜tool▁call▁begin｜>g<｜tool▁sep｜>{\"s\": \"q\"}"
                                  "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
      {harmony_tool_parser(), "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"n\": 3}<|call|>"
                              "<|start|>assistant<|channel|>final<|message|>done<|return|>", 1},
      {qwen3_coder_tool_parser(), "<tool_call>\n<function=f>\n<parameter=n>\n7\n</parameter>\n<parameter=s>\na<b\n"
                                  "</parameter>\n</function>\n</tool_call>", 1},
  };
}

// `text` with one byte deleted, one inserted (from the bytes markup is made of) or a slice repeated.
std::string damaged(const std::string& text, std::mt19937& random) {
  static constexpr std::string_view kBytes = "{}[]\":,\\<>/=|\n x1";
  std::uniform_int_distribution<size_t> at(0, text.size() - 1);
  std::string out = text;
  const size_t i = at(random);
  switch (random() % 3) {
    case 0: out.erase(i, 1); break;
    case 1: out.insert(out.begin() + static_cast<std::ptrdiff_t>(i), kBytes[random() % kBytes.size()]); break;
    default: out.insert(i, text.substr(at(random), 1 + random() % 8)); break;
  }
  return out;
}

TEST(ToolCallStream, DamagedCallsStreamLikeTheWholeParse) {
  std::mt19937 random(17);
  for (const Sample& sample : samples()) {
    const ParsedOutput intact = expect_streams_like_whole(sample.parser, sample.text, kTools);
    EXPECT_EQ(intact.tool_calls.size(), sample.num_calls) << sample.text;
    for (int round = 0; round < 200; ++round) {
      const std::string text = damaged(sample.text, random);
      SCOPED_TRACE(std::string(sample.parser.name()) + ": " + text);
      expect_streams_like_whole(sample.parser, text, kTools);
    }
  }
}

}  // namespace
}  // namespace strata::server
