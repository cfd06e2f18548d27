#include "strata/server/served_model.h"

#include <algorithm>

#include <fmt/format.h>

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

void check_model_name(const ServedModel& model, const std::string* name) {
  if (name == nullptr) return;
  if (std::find(model.accepted_names.begin(), model.accepted_names.end(), *name) != model.accepted_names.end())
    return;
  throw ApiError(404, fmt::format("The model '{}' does not exist; this server serves '{}'", *name, model.served_name),
                 "invalid_request_error", "model", "model_not_found");
}

}  // namespace strata::server
