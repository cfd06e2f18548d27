// What a chat answer's text becomes on every API that runs the chat path (chat completions,
// Anthropic messages, responses): the thinking (--reasoning-parser), the content, and the
// tool calls parsed from the content, whole or as the text streams out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "strata/server/chat_request.h"
#include "strata/server/reasoning_parser.h"
#include "strata/server/tool_call_parser.h"
#include "strata/server/tool_call_stream.h"

namespace strata::server {

struct ChatAnswer {
  std::string reasoning;  // empty without a parser; streamed: also with include_reasoning false
  std::string content;    // without the tool-call blocks (trimmed when there were calls)
  std::vector<ToolCall> tool_calls;  // at most one when parallel_tool_calls is false
};

// The whole output of one choice.
ChatAnswer parse_chat_answer(const ChatRequest& chat, std::string_view text);

// One choice's output as it streams: thinking and content that can be sent now, tool-call
// blocks held back for the end (a tail that could grow into a tag is held too).
class ChatOutputStream {
 public:
  explicit ChatOutputStream(const ChatRequest& chat);

  ReasoningDelta push(std::string_view text);
  // At the end: the held-back thinking and content, and the calls.
  ChatAnswer finish();

 private:
  bool parse_tool_calls_;
  bool include_reasoning_;
  bool parallel_;
  ReasoningParser reasoning_;
  ToolCallStream tool_calls_;
};

}  // namespace strata::server
