#include "strata/server/chat_output.h"

namespace strata::server {
namespace {

// parallel_tool_calls false: only the first call (a forced choice never writes a second).
void limit_calls(bool parallel, std::vector<ToolCall>& calls) {
  if (!parallel && calls.size() > 1) calls.resize(1);
}

}  // namespace

ChatAnswer parse_chat_answer(const ChatRequest& chat, std::string_view text) {
  ReasoningDelta split = split_reasoning(chat.reasoning, chat.prompt_tail, text);
  ChatAnswer answer{.reasoning = std::move(split.reasoning)};
  if (!chat.parse_tool_calls) {
    answer.content = std::move(split.content);
    return answer;
  }
  ParsedOutput parsed = parse_tool_calls(split.content);
  limit_calls(chat.tool_choice.parallel, parsed.tool_calls);
  answer.content = std::move(parsed.content);
  answer.tool_calls = std::move(parsed.tool_calls);
  return answer;
}

ChatOutputStream::ChatOutputStream(const ChatRequest& chat)
    : parse_tool_calls_(chat.parse_tool_calls), include_reasoning_(chat.include_reasoning),
      parallel_(chat.tool_choice.parallel), reasoning_(chat.reasoning, chat.prompt_tail) {}

ReasoningDelta ChatOutputStream::push(std::string_view text) {
  ReasoningDelta delta = reasoning_.push(text);
  if (parse_tool_calls_) delta.content = tool_calls_.push(delta.content);
  if (!include_reasoning_) delta.reasoning.clear();
  return delta;
}

ChatAnswer ChatOutputStream::finish() {
  ReasoningDelta last = reasoning_.finish();
  ChatAnswer answer{.reasoning = include_reasoning_ ? std::move(last.reasoning) : std::string()};
  if (!parse_tool_calls_) {
    answer.content = std::move(last.content);
    return answer;
  }
  answer.content = tool_calls_.push(last.content);
  ParsedOutput parsed = tool_calls_.finish();
  limit_calls(parallel_, parsed.tool_calls);
  answer.content += parsed.content;
  answer.tool_calls = std::move(parsed.tool_calls);
  return answer;
}

}  // namespace strata::server
