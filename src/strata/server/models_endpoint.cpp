#include "strata/server/models_endpoint.h"

#include <optional>
#include <string>

#include "strata/server/api_error.h"
#include "strata/server/json_fields.h"
#include "strata/server/openai_objects.h"
#include "strata/server/url_query.h"

namespace strata::server {
namespace {

Json model_object(const ServedModel& m, int32_t lora_slot) {
  const bool base = lora_slot < 0;
  const std::string& id = base ? m.served_name : m.lora_names[lora_slot];
  Json card{{"id", id}, {"object", "model"}, {"created", m.created_unix}, {"owned_by", "strata"},
            {"root", base ? m.model_path : m.lora_paths[lora_slot]}, {"max_model_len", m.service->max_model_len()}};
  if (!base) card["parent"] = m.served_name;
  card["input_modalities"] = m.vision != nullptr ? Json::array({"text", "image"}) : Json::array({"text"});
  return card;
}

}  // namespace

HttpReply list_models(const ServedModel& m) {
  Json cards = Json::array({model_object(m, -1)});
  for (size_t i = 0; i < m.lora_names.size(); ++i) cards.push_back(model_object(m, static_cast<int32_t>(i)));
  return {.body = dump_json(Json{{"object", "list"}, {"data", cards}})};
}

HttpReply retrieve_model(const ServedModel& m, std::string_view id_in_path) {
  constexpr size_t kMaxIdBytes = 512;  // longer than any name served, and kept out of the message
  const std::optional<std::string> id = percent_decode(id_in_path);
  if (!id || id->empty() || id->size() > kMaxIdBytes)
    throw ApiError(404, "the model id in the path is empty, too long or not percent-encoded properly; GET /v1/models "
                   "lists the ids", "invalid_request_error", "model", "model_not_found");
  return {.body = dump_json(model_object(m, check_model_name(m, &*id)))};
}

}  // namespace strata::server
