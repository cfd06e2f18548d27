// POST /v1/chat/completions: the conversation through the chat template, generated on the
// engine, answered as chat.completion or streamed as chat.completion.chunk events.
// A reasoning parser splits the thinking off first (reasoning_content); in the rest,
// the tool calls the served model's parser finds become message.tool_calls (tool_choice
// "required" or a named function makes the engine write only calls), streamed as deltas.
#pragma once

#include "strata/server/http_reply.h"
#include "strata/server/json_fields.h"
#include "strata/server/reasoning_parser.h"
#include "strata/server/served_model.h"

namespace strata::server {

// Throws ApiError for a request it refuses. A non-streamed answer stops waiting (and
// cancels its engine requests) once `client` is gone. `reasoning`: --reasoning-parser.
HttpReply chat_completion(const ServedModel& model, ReasoningFormat reasoning, const Json& body,
                          const ClientWatch& client);

}  // namespace strata::server
