// An Anthropic Messages body (/v1/messages, /v1/messages/count_tokens) mapped onto a chat
// body that read_chat_request reads: system and messages become chat messages (tool_use
// blocks an assistant's tool_calls, tool_result blocks tool messages), tools functions,
// tool_choice any / tool the forced calls, stop_sequences the stop strings, and thinking the
// template's enable_thinking (only with a reasoning parser; without one it is ignored).
#pragma once

#include <string>
#include <vector>

#include "strata/server/chat_request.h"
#include "strata/server/json_fields.h"

namespace strata::server {

struct MessagesRequest {
  ChatRequest chat;
  std::vector<std::string> stop_sequences;  // to tell a stop sequence from the end of a turn
};

// A 400 naming the field for anything malformed or not supported (image blocks, server tools).
// `reasoning_parser`: the server has one, so `thinking` switches the template's thinking.
MessagesRequest read_messages_request(const Json& body, int64_t vocab_size, bool reasoning_parser);

// The conversation alone, for count_tokens.
ChatRenderRequest read_messages_conversation(const Json& body, bool reasoning_parser,
                                             std::vector<std::string>* image_urls = nullptr);

}  // namespace strata::server
