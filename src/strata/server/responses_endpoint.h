// POST /v1/responses: OpenAI's Responses API on the chat path (responses_request maps the
// body). The answer is a "response" object, or its event stream: response.created, then per
// output item output_item.added, its deltas and done events, output_item.done, and
// response.completed (or response.incomplete / response.failed), every event numbered by
// sequence_number. Stored answers (store, default true) can be continued by id.
#pragma once

#include <memory>

#include "strata/server/http_reply.h"
#include "strata/server/json_fields.h"
#include "strata/server/reasoning_parser.h"
#include "strata/server/response_store.h"
#include "strata/server/served_model.h"

namespace strata::server {

// Throws ApiError for a request it refuses.
HttpReply create_response(const ServedModel& model, ReasoningFormat reasoning, const Json& body,
                          const std::shared_ptr<ResponseStore>& store, const ClientWatch& client);

}  // namespace strata::server
