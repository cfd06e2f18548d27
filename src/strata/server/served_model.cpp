#include "strata/server/served_model.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "strata/lora/lora_set.h"
#include "strata/server/api_error.h"

namespace strata::server {

const text::Tokenizer& require_tokenizer(const ServedModel& model, const char* what) {
  if (!model.accepts_text)
    throw bad_request(fmt::format("model '{}' was loaded without a tokenizer, so it takes token ids only; "
                                  "send 'prompt' as an array of token ids to /v1/completions, or serve a "
                                  "model folder with tokenizer.json or a .gguf",
                                  model.served_name),
                      what);
  return *model.tokenizer;
}

void require_task(const ServedModel& model, ModelTask task, const char* route) {
  const ModelTask served = model.pooler == nullptr                        ? ModelTask::kGenerate
                           : model.pooler->head == ModelHead::kClassifier ? ModelTask::kClassify
                                                                          : ModelTask::kEmbed;
  if (served == task) return;
  const char* what = served == ModelTask::kGenerate ? "a generative model: it serves /v1/chat/completions, "
                                                      "/v1/completions, /v1/responses and /v1/messages"
                     : served == ModelTask::kEmbed ? "an embedding model: it serves /v1/embeddings"
                                                   : "a classifier (cross-encoder): it serves /v1/score, /v1/rerank "
                                                     "and /v1/classify";
  const char* need = task == ModelTask::kGenerate ? "a generative model"
                     : task == ModelTask::kEmbed  ? "an embedding model (--runner pooling, --task embed)"
                                                  : "a sequence-classification model (--task score)";
  throw bad_request(fmt::format("model '{}' is {}; {} needs {}", model.served_name, what, route, need), "model");
}

int32_t check_model_name(const ServedModel& model, const std::string* name) {
  if (name == nullptr) return -1;
  if (std::find(model.accepted_names.begin(), model.accepted_names.end(), *name) != model.accepted_names.end())
    return -1;
  const auto lora = std::find(model.lora_names.begin(), model.lora_names.end(), *name);
  if (lora != model.lora_names.end()) return static_cast<int32_t>(lora - model.lora_names.begin());
  throw ApiError(404, fmt::format("The model '{}' does not exist; this server serves '{}'", *name, model.served_name),
                 "invalid_request_error", "model", "model_not_found");
}

std::string apply_lora_choice(const ServedModel& model, int32_t lora_slot, GenerationRequest& request) {
  if (lora_slot < 0) return model.served_name;
  request.lora_slot = lora_slot;
  request.cache_key = lora_cache_key(model.lora_names[lora_slot]);
  return model.lora_names[lora_slot];
}

}  // namespace strata::server
