// A /v1/responses body mapped onto a chat body that read_chat_request reads: `input` (a
// string, or items: messages with input_text parts, function_call and function_call_output
// items) after the conversation of previous_response_id, `instructions` as the system
// message (never carried to a follow-up, as OpenAI does), function tools, tool_choice,
// text.format as response_format and max_output_tokens as max_tokens.
#pragma once

#include <optional>
#include <string>

#include "strata/server/chat_request.h"
#include "strata/server/json_fields.h"
#include "strata/server/response_store.h"

namespace strata::server {

struct ResponsesRequest {
  ChatRequest chat;
  Json conversation;  // chat messages without the instructions: what a follow-up continues
  Json input_items;   // this request's input as GET .../input_items lists it
  bool store = true;
};

// A 400 naming the field for anything malformed or not supported, and for a
// previous_response_id the store does not hold (code previous_response_not_found).
ResponsesRequest read_responses_request(const Json& body, int64_t vocab_size, const ResponseStore& store);

}  // namespace strata::server
