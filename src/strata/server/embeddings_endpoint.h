// POST /v1/embeddings (OpenAI's schema) on an embedding model: `input` as text, token ids or
// lists of either, `encoding_format` float or base64 (little-endian f32, as the openai client
// asks by default), `dimensions` (matryoshka models only: the first values, renormalised).
#pragma once

#include "strata/server/http_reply.h"
#include "strata/server/json_fields.h"
#include "strata/server/served_model.h"

namespace strata::server {

HttpReply create_embeddings(const ServedModel& model, const Json& body, const ClientWatch& client);

// The little-endian bytes of `values` in base64 (RFC 4648, padded).
std::string base64_floats(const std::vector<float>& values);

}  // namespace strata::server
