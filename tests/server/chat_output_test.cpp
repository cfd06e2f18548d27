// A chat answer's text through the reasoning parser and the served model's tool-call parser:
// calls in the thinking are found (Qwen3 calling before </think>), gpt-oss calls come through
// --reasoning-parser openai_gptoss to the harmony parser, a forced call's prefix (Mistral's
// [TOOL_CALLS], which ended the prompt) is read before the output, parallel_tool_calls false
// keeps the first call; streamed at every split, the same answer as whole.
#include "strata/server/chat_output.h"

#include <gtest/gtest.h>

#include "server/tool_parsers/tool_parser_support.h"
#include "strata/server/tool_parsers/families.h"
#include "strata/server/tool_parsers/parse_helpers.h"

namespace strata::server {
namespace {

ChatRequest chat(const ToolParser& parser, ReasoningFormat reasoning) {
  ChatRequest c;
  c.parse_tool_calls = true;
  c.tool_parser = &parser;
  c.reasoning = reasoning;
  return c;
}

// The whole answer, after checking every 2-way split streams to the same.
ChatAnswer expect_streams_like_whole(const ChatRequest& c, std::string_view text) {
  const ChatAnswer whole = parse_chat_answer(c, text);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    ChatOutputStream stream(c);
    ChatAnswer total;
    for (ChatAnswer part : {stream.push(text.substr(0, cut)), stream.push(text.substr(cut)), stream.finish()}) {
      total.reasoning += part.reasoning;
      total.content += part.content;
      total.tool_calls.insert(total.tool_calls.end(), part.tool_calls.begin(), part.tool_calls.end());
    }
    EXPECT_EQ(total.reasoning, whole.reasoning) << "cut " << cut;
    EXPECT_EQ(std::string(trim_blank(total.content)), std::string(trim_blank(whole.content))) << "cut " << cut;
    EXPECT_EQ(call_lines(total.tool_calls), call_lines(whole.tool_calls)) << "cut " << cut;
  }
  return whole;
}

TEST(ChatOutput, CallInsideTheThinkingIsFound) {
  const ChatAnswer a = expect_streams_like_whole(
      chat(hermes_tool_parser(), ReasoningFormat::kQwen3),
      "<think>Weather needed. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>");
  EXPECT_EQ(a.reasoning, "Weather needed. ");
  EXPECT_EQ(a.content, "");
  EXPECT_EQ(call_lines(a.tool_calls), std::vector<std::string>{"get_weather {\"city\":\"Rome\"}"});
}

TEST(ChatOutput, HarmonyCallsThroughTheReasoningParser) {
  const ChatAnswer a = expect_streams_like_whole(
      chat(harmony_tool_parser(), ReasoningFormat::kHarmony),
      "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
      "to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Oslo\"}<|call|>");
  EXPECT_EQ(a.reasoning, "Need weather.");
  EXPECT_EQ(a.content, "");
  EXPECT_EQ(call_lines(a.tool_calls), std::vector<std::string>{"get_weather {\"city\":\"Oslo\"}"});
}

TEST(ChatOutput, ForcedPrefixIsReadBeforeTheOutput) {
  ChatRequest c = chat(mistral_tool_parser(), ReasoningFormat::kNone);
  c.tool_choice.forced_prefix = "[TOOL_CALLS]";
  const ChatAnswer a = expect_streams_like_whole(c, R"([{"name": "f", "arguments": {"x": 1}}])");
  EXPECT_EQ(call_lines(a.tool_calls), std::vector<std::string>{"f {\"x\":1}"});
  EXPECT_EQ(a.content, "");
}

TEST(ChatOutput, OneCallWhenNotParallelAndNoParsingWithoutTools) {
  ChatRequest c = chat(llama3_json_tool_parser(), ReasoningFormat::kNone);
  c.tool_choice.parallel = false;
  const std::string two = R"({"name": "a", "parameters": {}}; {"name": "b", "parameters": {}})";
  EXPECT_EQ(call_lines(expect_streams_like_whole(c, two).tool_calls), std::vector<std::string>{"a {}"});
  c.parse_tool_calls = false;
  const ChatAnswer plain = expect_streams_like_whole(c, two);
  EXPECT_TRUE(plain.tool_calls.empty());
  EXPECT_EQ(plain.content, two);
}

// The deltas of every call, as "index name" / "index +arguments" / "index ." lines.
std::vector<std::string> streamed_deltas(const ChatRequest& c, const std::vector<std::string_view>& pieces) {
  ChatOutputStream stream(c);
  std::vector<std::string> lines;
  const auto take = [&](const ChatAnswer& answer) {
    for (const ToolCallDelta& d : answer.tool_call_deltas) {
      if (!d.name.empty()) lines.push_back(std::to_string(d.call) + " " + d.name);
      if (!d.arguments.empty()) lines.push_back(std::to_string(d.call) + " +" + d.arguments);
      if (d.closes) lines.push_back(std::to_string(d.call) + " .");
    }
  };
  for (std::string_view piece : pieces) take(stream.push(piece));
  take(stream.finish());
  return lines;
}

// Calls in the thinking and in the answer share one count of indices; with
// parallel_tool_calls false the deltas of calls after the first are dropped.
TEST(ChatOutput, CallDeltasCountAcrossThinkingAndAnswer) {
  ChatRequest c = chat(hermes_tool_parser(), ReasoningFormat::kQwen3);
  const std::vector<std::string_view> pieces = {
      "<think>Hm <tool_call>{\"name\": \"a\", \"arguments\": {\"x\": ", "1}}</tool_call></think>Now ",
      "<tool_call>{\"name\": \"b\", \"arguments\": {\"y\"", ": 2}}</tool_call>"};
  EXPECT_EQ(streamed_deltas(c, pieces), (std::vector<std::string>{"0 a", "0 +{\"x\":", "0 +1}", "0 .", "1 b",
                                                                  "1 +{\"y\"", "1 +:2}", "1 ."}));
  c.tool_choice.parallel = false;
  EXPECT_EQ(streamed_deltas(c, pieces), (std::vector<std::string>{"0 a", "0 +{\"x\":", "0 +1}", "0 ."}));
}

}  // namespace
}  // namespace strata::server
