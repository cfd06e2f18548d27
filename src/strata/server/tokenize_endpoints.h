// POST /tokenize ({prompt} or {messages, tools, ...} through the chat template) and
// POST /detokenize ({tokens}), as vLLM serves them. Both need the model's tokenizer.
#pragma once

#include "strata/server/http_reply.h"
#include "strata/server/json_fields.h"
#include "strata/server/served_model.h"

namespace strata::server {

HttpReply tokenize(const ServedModel& model, const Json& body);
HttpReply detokenize(const ServedModel& model, const Json& body);

}  // namespace strata::server
