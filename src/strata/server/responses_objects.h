// The shapes of OpenAI's Responses API that /v1/responses answers with, whole or streamed:
// the response object (with the request fields it repeats), its output items (reasoning,
// message, function_call) and usage.
#pragma once

#include <string>

#include "strata/server/chat_output.h"
#include "strata/server/generation_run.h"
#include "strata/server/json_fields.h"

namespace strata::server {

struct ResponseEnvelope {
  std::string id;         // "resp_..."
  int64_t created_at = 0;
  std::string model;
  Json request_fields;    // what the response object repeats of the request (response_request_fields)
};

// instructions, max_output_tokens, tools, tool_choice, ... with OpenAI's defaults when absent.
Json response_request_fields(const Json& body, bool store);

// status: "in_progress", "completed", "incomplete" (max_output_tokens reached) or "failed".
struct ResponseState {
  const char* status = "in_progress";
  Json output = Json::array();
  Json usage = nullptr;
  Json error = nullptr;  // {"code", "message"} when failed
};
Json response_json(const ResponseEnvelope& envelope, const ResponseState& state);

Json responses_usage_json(const Usage& usage);

// Output items; `status` "in_progress", "completed" or "incomplete".
Json reasoning_item(const std::string& id, const std::string& text, const char* status);
Json message_item(const std::string& id, const std::string& text, const char* status);
Json output_text_part(const std::string& text);
Json function_call_item(const std::string& id, const ToolCall& call, const char* status);

// The items of a whole answer: thinking, text (also when empty, unless there are calls), calls.
Json output_items(const ChatAnswer& answer, bool incomplete);

// The answer as the chat message a follow-up (previous_response_id) continues from.
Json assistant_message(const std::string& content, const std::vector<ToolCall>& calls);

}  // namespace strata::server
