// POST /v1/chat/completions: the conversation through the chat template, generated on the
// engine, answered as chat.completion or streamed as chat.completion.chunk events.
// With tools, Hermes-style <tool_call> blocks in the output become message.tool_calls;
// tool_choice "required" or a named function makes the engine write only such blocks.
// With a reasoning format the thinking is split off first (message.reasoning_content,
// delta.reasoning_content) and tool calls are read from the answer only.
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
