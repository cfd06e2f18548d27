// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API on the chat path
// (anthropic_request maps the body). The answer is a "message" whose content is thinking
// (with a reasoning parser), text and tool_use blocks, or Anthropic's event stream:
// message_start, per block content_block_start / _delta / _stop, message_delta, message_stop.
#pragma once

#include "strata/server/http_reply.h"
#include "strata/server/json_fields.h"
#include "strata/server/reasoning_parser.h"
#include "strata/server/served_model.h"

namespace strata::server {

// Throws ApiError for a request it refuses; the route answers it in Anthropic's error shape.
HttpReply create_message(const ServedModel& model, ReasoningFormat reasoning, const Json& body,
                         const ClientWatch& client);

// {"input_tokens": N}: the rendered prompt's length, tools and system included.
HttpReply count_message_tokens(const ServedModel& model, ReasoningFormat reasoning, const Json& body);

}  // namespace strata::server
