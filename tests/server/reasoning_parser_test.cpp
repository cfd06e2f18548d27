// The reasoning parsers on whole outputs (exact splits), on the prompt's tail (a template
// that opened or closed the thinking), and streamed: every 2-way split of an output and a
// byte-at-a-time feed give the whole output's split, and no tag text ever leaks out.
#include "strata/server/reasoning_parser.h"

#include <gtest/gtest.h>

#include <vector>

namespace strata::server {
namespace {

using F = ReasoningFormat;

struct Split {
  std::string reasoning, content;
  bool operator==(const Split&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Split& s) {
  return os << "{reasoning: \"" << s.reasoning << "\", content: \"" << s.content << "\"}";
}

void add(Split& total, const ReasoningDelta& d) {
  total.reasoning += d.reasoning;
  total.content += d.content;
}

Split whole(F format, std::string_view text, std::string_view prompt = {}) {
  const ReasoningDelta d = split_reasoning(format, prompt, text);
  return {d.reasoning, d.content};
}

// The text fed as the given pieces.
Split streamed(F format, const std::vector<std::string_view>& pieces, std::string_view prompt = {}) {
  ReasoningParser parser(format, prompt);
  Split total;
  for (std::string_view piece : pieces) add(total, parser.push(piece));
  add(total, parser.finish());
  return total;
}

// Asserts that every cut of `text` in two, and one byte at a time, split as `expected`.
void expect_every_split(F format, std::string_view text, const Split& expected, std::string_view prompt = {}) {
  ASSERT_EQ(whole(format, text, prompt), expected) << text;
  for (size_t cut = 0; cut <= text.size(); ++cut)
    ASSERT_EQ(streamed(format, {text.substr(0, cut), text.substr(cut)}, prompt), expected) << text << " cut " << cut;
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < text.size(); ++i) bytes.push_back(text.substr(i, 1));
  ASSERT_EQ(streamed(format, bytes, prompt), expected) << text << " byte by byte";
}

TEST(ReasoningParser, FormatNames) {
  EXPECT_EQ(parse_reasoning_format("qwen3"), F::kQwen3);
  EXPECT_EQ(parse_reasoning_format("deepseek_r1"), F::kDeepSeekR1);
  EXPECT_EQ(parse_reasoning_format("openai_gptoss"), F::kHarmony);
  EXPECT_EQ(parse_reasoning_format("gpt-oss"), F::kHarmony);
  EXPECT_EQ(parse_reasoning_format("gptoss"), F::kHarmony);
  EXPECT_EQ(parse_reasoning_format("Qwen3"), std::nullopt);
  EXPECT_EQ(parse_reasoning_format(""), std::nullopt);
}

TEST(ReasoningParser, Qwen3ThinkBlock) {
  expect_every_split(F::kQwen3, "<think>\nPlan: add.\n</think>\n\n2 + 2 = 4.", {"\nPlan: add.\n", "\n\n2 + 2 = 4."});
  expect_every_split(F::kQwen3, "Hi <think>a<b</think> there", {"a<b", "Hi  there"});
  // A repeated opening tag inside the thinking is dropped; after </think> tags are text.
  expect_every_split(F::kQwen3, "<think>x<think>y</think>z<think>w</think>", {"xy", "z<think>w</think>"});
}

TEST(ReasoningParser, Qwen3WithoutTagsIsAllContent) {
  expect_every_split(F::kQwen3, "No tags here, only < and </ and <th.", {"", "No tags here, only < and </ and <th."});
  // Without <think> in the output or the prompt, a stray </think> is text.
  expect_every_split(F::kQwen3, "plan</think>answer", {"", "plan</think>answer"});
  expect_every_split(F::kQwen3, "", {"", ""});
}

TEST(ReasoningParser, Qwen3OpenTagInThePrompt) {
  // Qwen3-Thinking templates end the prompt with "<think>\n": the output has no opening tag.
  const std::string_view prompt = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n";
  expect_every_split(F::kQwen3, "plan</think>\n\nanswer", {"plan", "\n\nanswer"}, prompt);
  expect_every_split(F::kQwen3, "<think>plan</think>answer", {"plan", "answer"}, prompt);
}

TEST(ReasoningParser, ThinkingClosedInThePrompt) {
  // enable_thinking false: the template writes an empty think block; the output is the answer.
  const std::string_view prompt = "<|im_start|>assistant\n<think>\n\n</think>\n\n";
  expect_every_split(F::kQwen3, "4, and <think> is text", {"", "4, and <think> is text"}, prompt);
  expect_every_split(F::kDeepSeekR1, "4", {"", "4"}, prompt);
}

TEST(ReasoningParser, UnterminatedThinkingStaysThinking) {
  expect_every_split(F::kQwen3, "<think>still going", {"still going", ""});
  expect_every_split(F::kQwen3, "<think>cut at </thi", {"cut at </thi", ""});
  expect_every_split(F::kDeepSeekR1, "no end tag at all", {"no end tag at all", ""});
}

TEST(ReasoningParser, DeepSeekR1ThinksUntilTheEndTag) {
  expect_every_split(F::kDeepSeekR1, "plan</think>answer", {"plan", "answer"});
  expect_every_split(F::kDeepSeekR1, "<think>\nplan\n</think>\nanswer", {"\nplan\n", "\nanswer"});
  expect_every_split(F::kDeepSeekR1, "</think>", {"", ""});
  expect_every_split(F::kDeepSeekR1, "a</think>b</think>", {"a", "b</think>"});
}

TEST(ReasoningParser, HarmonyChannels) {
  expect_every_split(F::kHarmony,
                     "<|channel|>analysis<|message|>User wants 2+2.<|end|><|start|>assistant<|channel|>final"
                     "<|message|>4<|return|>",
                     {"User wants 2+2.", "4"}, "<|start|>user<|message|>2+2?<|end|><|start|>assistant");
  // The stop token is not in the text; commentary (a preamble) is content.
  expect_every_split(F::kHarmony,
                     "<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>commentary<|message|>b"
                     "<|end|><|start|>assistant<|channel|>final<|message|>c",
                     {"a", "bc"});
  expect_every_split(F::kHarmony, "<|channel|>analysis<|message|>cut sh", {"cut sh", ""});
}

// A message to a tool stays whole, markup and end tag too, for the tool-call parser.
TEST(ReasoningParser, HarmonyCallsStayWholeInTheContent) {
  const std::string call =
      "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Oslo\"}"
      "<|call|>";
  expect_every_split(F::kHarmony, "<|channel|>analysis<|message|>Need weather.<|end|>" + call,
                     {"Need weather.", call});
  expect_every_split(F::kHarmony, "{}<|call|>", {"", "<|start|>assistant to=functions.now<|channel|>commentary<|message|>{}<|call|>"},
                     "<|start|>assistant to=functions.now<|channel|>commentary<|message|>");
}

TEST(ReasoningParser, HarmonyWithoutMarkup) {
  expect_every_split(F::kHarmony, "plain text", {"", "plain text"});
  // A header cut before its message is markup only: dropped.
  expect_every_split(F::kHarmony, "<|channel|>analysis<|message|>a<|end|><|start|>assistant<|chan", {"a", ""});
  // The prompt opened the final message itself.
  expect_every_split(F::kHarmony, "4", {"", "4"}, "<|start|>assistant<|channel|>final<|message|>");
  expect_every_split(F::kHarmony, "hm<|end|>", {"hm", ""}, "<|start|>assistant<|channel|>analysis<|message|>");
}

TEST(ReasoningParser, NoFormatPassesEverything) {
  expect_every_split(F::kNone, "<think>x</think>y", {"", "<think>x</think>y"}, "<think>\n");
}

TEST(ReasoningParser, PartialTagsAreHeldBackOnly) {
  ReasoningParser parser(F::kQwen3);
  ReasoningDelta d = parser.push("So <th");
  EXPECT_EQ(d.content, "So ");
  EXPECT_EQ(d.reasoning, "");
  d = parser.push("ink>why</");
  EXPECT_EQ(d.content, "");
  EXPECT_EQ(d.reasoning, "why");
  d = parser.push("thinking");  // not </think> after all
  EXPECT_EQ(d.reasoning, "</thinking");
  d = parser.push("</think>ok");
  EXPECT_EQ(d.reasoning, "");
  EXPECT_EQ(d.content, "ok");
  d = parser.finish();
  EXPECT_EQ(d.reasoning + d.content, "");
}

}  // namespace
}  // namespace strata::server
