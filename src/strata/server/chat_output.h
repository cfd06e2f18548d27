// What a chat answer's text becomes on every API that runs the chat path (chat completions,
// Anthropic messages, responses): the thinking (--reasoning-parser), the content, and the
// tool calls the served model's tool-call parser finds, in the content and in the thinking
// (a model may call a tool before it closes its thinking), whole or as the text streams out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "strata/server/chat_request.h"
#include "strata/server/reasoning_parser.h"
#include "strata/server/tool_call_stream.h"

namespace strata::server {

struct ChatAnswer {
  std::string reasoning;  // empty without a parser; streamed: also with include_reasoning false
  std::string content;    // without the calls' markup (whole answer: trimmed when there were calls)
  std::vector<ToolCall> tool_calls;  // at most one when parallel_tool_calls is false
  // Streamed: the calls as deltas (`call` is the call's index in the answer); those of calls in
  // the thinking come before all the content.
  std::vector<ToolCallDelta> tool_call_deltas;
};

// A streamed answer's content and call deltas in the order they were written: `text` for each
// run of content (the last one maybe empty), `call` for each delta.
template <typename Text, typename Call>
void in_written_order(const ChatAnswer& answer, Text&& text, Call&& call) {
  size_t at = 0;
  for (const ToolCallDelta& d : answer.tool_call_deltas) {
    text(std::string_view(answer.content).substr(at, d.content_before - at));
    at = d.content_before;
    call(d);
  }
  text(std::string_view(answer.content).substr(at));
}

// The whole output of one choice: the stream below fed all of it at once.
ChatAnswer parse_chat_answer(const ChatRequest& chat, std::string_view text);

// One choice's output as it streams: thinking and content that can be sent now, and each
// tool call's deltas as it is written (a tail that could grow into a tag or a call is held back).
class ChatOutputStream {
 public:
  explicit ChatOutputStream(const ChatRequest& chat) : ChatOutputStream(chat, chat.include_reasoning) {}
  ChatOutputStream(const ChatRequest& chat, bool include_reasoning);

  ChatAnswer push(std::string_view text);
  // At the end: the held-back thinking, content and calls.
  ChatAnswer finish();

 private:
  ChatAnswer route(ReasoningDelta text, bool at_end);
  void add_calls(std::vector<ToolCall>& from, std::vector<ToolCall>& to);
  void add_deltas(std::vector<ToolCallDelta>& from, std::vector<int32_t>& indices, bool in_content,
                  std::vector<ToolCallDelta>& to);

  bool parse_tool_calls_;
  bool include_reasoning_;
  bool parallel_;
  int32_t num_calls_ = 0;
  int32_t num_streamed_calls_ = 0;
  std::vector<int32_t> reasoning_indices_;  // per call of each stream: its index, -1 when dropped
  std::vector<int32_t> content_indices_;
  ReasoningParser reasoning_;
  ToolCallStream reasoning_calls_;
  ToolCallStream content_calls_;
};

}  // namespace strata::server
