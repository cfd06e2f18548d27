// GET /v1/models and GET /v1/models/{id}: the served model and its LoRA adapters as OpenAI
// model objects (`parent` names the base model of an adapter).
#pragma once

#include <string_view>

#include "strata/server/http_reply.h"
#include "strata/server/served_model.h"

namespace strata::server {

HttpReply list_models(const ServedModel& model);

// `id_in_path`: what follows /v1/models/ in the path, percent-encoded. The object of the model
// or adapter it names (an alias of the base model answers with the base's object); a 404
// model_not_found otherwise.
HttpReply retrieve_model(const ServedModel& model, std::string_view id_in_path);

}  // namespace strata::server
