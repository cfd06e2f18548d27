// POST /v1/completions: one engine request per prompt (text or token ids), n choices each,
// answered as text_completion or streamed as text_completion events.
#pragma once

#include "strata/server/http_reply.h"
#include "strata/server/json_fields.h"
#include "strata/server/served_model.h"

namespace strata::server {

// Throws ApiError for a request it refuses. A non-streamed answer stops waiting (and
// cancels its engine requests) once `client` is gone.
HttpReply text_completion(const ServedModel& model, const Json& body, const ClientWatch& client);

}  // namespace strata::server
