// Splits a model's thinking from its answer as the text streams out (--reasoning-parser).
// Think-tag models (qwen3, deepseek_r1) write <think>...</think>; gpt-oss writes harmony
// messages, whose "analysis" channel is the thinking. Tags are never sent to the client, and
// a tail that could still grow into a tag is held back, so any split of the text into deltas
// gives the same totals. A harmony message to a tool stays whole in the content.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace strata::server {

enum class ReasoningFormat {
  kNone,        // no parser: everything is content
  kQwen3,       // <think>...</think> where the output (or the prompt's tail) opens it
  kDeepSeekR1,  // everything before </think> is thinking, <think> or not
  kHarmony,     // gpt-oss: <|channel|>analysis<|message|>...<|end|> is thinking
};

// vLLM's --reasoning-parser names: qwen3, deepseek_r1, openai_gptoss (also gpt-oss, gptoss,
// gpt_oss); nullopt for any other.
std::optional<ReasoningFormat> parse_reasoning_format(std::string_view name);
inline constexpr std::string_view kReasoningFormatNames = "qwen3, deepseek_r1, openai_gptoss";

struct ReasoningDelta {
  std::string reasoning;
  std::string content;
};

class ReasoningParser {
 public:
  // `prompt`: the rendered prompt, or its end; a template that already opened (or closed)
  // the thinking there, e.g. Qwen3's enable_thinking false, decides where the output starts.
  explicit ReasoningParser(ReasoningFormat format = ReasoningFormat::kNone, std::string_view prompt = {});

  ReasoningDelta push(std::string_view text);
  // At the end: the held-back tail, in the part it was written in. Thinking left open
  // (generation stopped inside it) stays thinking.
  ReasoningDelta finish();

 private:
  enum class State {
    kContent,      // before any thinking (qwen3); watching for <think>
    kThinking,     // inside <think>; watching for </think>
    kAnswer,       // after </think>: content, no tags
    kHeader,       // harmony: a message's header, up to <|message|>
    kAnalysis,     // harmony: the body of an analysis message
    kFinal,        // harmony: the body of any other message
    kToolCall,     // harmony: a message to a tool, given out whole (markup too) as content for
                   // the tool-call parser
  };
  // Moves everything of `pending_` that can no longer start a tag into `out`.
  void drain(ReasoningDelta& out);
  void emit(std::string_view text, ReasoningDelta& out);
  void enter_body(std::string& content);

  State state_;
  std::string pending_;  // text not yet given out
  std::string header_;   // harmony: the current message's header text
};

// The whole output at once: push(text) then finish().
ReasoningDelta split_reasoning(ReasoningFormat format, std::string_view prompt, std::string_view text);

}  // namespace strata::server
