#include "strata/server/pooling_run.h"

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/engine/prompt_truncation.h"
#include "strata/server/api_error.h"
#include "strata/server/json_fields.h"

namespace strata::server {
namespace {

bool is_id_array(const Json& value) {
  if (!value.is_array() || value.empty()) return false;
  for (const Json& v : value)
    if (!v.is_number_integer()) return false;
  return true;
}

}  // namespace

std::vector<PoolingInput> read_body_inputs(const ServedModel& model, const Json& body) {
  const std::optional<std::string> name = read_string(body, "model");
  if (check_model_name(model, name ? &*name : nullptr) >= 0)
    throw bad_request("LoRA adapters serve generation only; name the base model", "model");
  const Json* input = find_field(body, "input");
  if (input == nullptr) throw bad_request("'input' is required", "input");
  return read_pooling_inputs(*input, "input", model.vocab_size);
}

std::vector<PoolingInput> read_pooling_inputs(const Json& value, const char* field, int64_t vocab_size) {
  std::vector<PoolingInput> inputs;
  if (value.is_string()) {
    inputs.emplace_back(value.get<std::string>());
  } else if (is_id_array(value)) {
    inputs.emplace_back(read_token_ids(value, field, vocab_size));
  } else if (value.is_array() && !value.empty() && value.size() <= kMaxPoolingInputs) {
    for (size_t i = 0; i < value.size(); ++i) {
      const Json& item = value[i];
      const std::string name = fmt::format("{}[{}]", field, i);
      if (item.is_string()) inputs.emplace_back(item.get<std::string>());
      else if (item.is_array()) inputs.emplace_back(read_token_ids(item, name, vocab_size));
      else throw bad_request(fmt::format("{} must be a string or an array of token ids, got {}", name, describe(item)),
                             field);
    }
  } else {
    throw bad_request(fmt::format("'{}' must be a string, an array of 1 to {} strings, an array of token ids or an "
                                  "array of token-id arrays, got {}", field, kMaxPoolingInputs, describe(value)),
                      field);
  }
  return inputs;
}

int64_t read_truncation(const ServedModel& model, const Json& body) {
  const Json* value = find_field(body, "truncate_prompt_tokens");
  if (value == nullptr || value->is_null()) return 0;
  if (!value->is_number_integer())
    throw bad_request(fmt::format("'truncate_prompt_tokens' must be an integer (-1: the model's limit), got {}",
                                  describe(*value)), "truncate_prompt_tokens");
  try {
    return truncation_max_tokens(value->get<int64_t>(), model.service->max_model_len());
  } catch (const Error& e) {
    throw bad_request(e.what(), "truncate_prompt_tokens");
  }
}

std::vector<int32_t> tokenize_input(const ServedModel& model, const PoolingInput& input, bool add_special_tokens,
                                    const std::string& name, int64_t max_tokens) {
  const std::string field = name.substr(0, name.find('['));
  if (const auto* ids = std::get_if<std::vector<int32_t>>(&input)) {
    if (ids->empty()) throw bad_request(fmt::format("{} is empty; give at least one token id", name), field);
    return keep_last_tokens(*ids, max_tokens);
  }
  const std::string& text = std::get<std::string>(input);
  if (text.empty()) throw bad_request(fmt::format("{} is an empty string; give some text", name), field);
  if (!model.accepts_text)
    throw bad_request(fmt::format("model '{}' was loaded without a tokenizer, so it takes token ids only; send {} "
                                  "as an array of token ids, or serve a model folder with tokenizer.json",
                                  model.served_name, name),
                      field);
  std::vector<int32_t> ids;
  try {
    ids = model.tokenizer->encode(text, add_special_tokens, max_tokens);
  } catch (const Error& e) {
    throw bad_request(fmt::format("{}: {}", name, e.what()), "truncate_prompt_tokens");
  }
  for (int32_t id : ids)
    if (id < 0 || id >= model.vocab_size)
      throw bad_request(fmt::format("{} encodes to token id {}, outside the model's vocabulary of {}", name, id,
                                    model.vocab_size), field);
  return ids;
}

GenerationRequest pooling_request(std::vector<int32_t> prompt_ids, int32_t dimensions) {
  GenerationRequest request;
  request.prompt_ids = std::move(prompt_ids);
  request.max_tokens = 0;
  request.pooling = PoolingRequest{.dimensions = dimensions};
  return request;
}

PoolingRun::PoolingRun(GenerationService& service, std::vector<GenerationRequest> requests,
                       const std::vector<std::string>& names)
    : service_(service) {
  STRATA_CHECK(!requests.empty() && names.size() == requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    num_prompt_tokens_ += static_cast<int64_t>(requests[i].prompt_ids.size());
    try {
      streams_.push_back(service_.submit(std::move(requests[i])));
      finished_.push_back(false);
    } catch (const Error& e) {
      cancel();
      throw bad_request(requests.size() > 1 ? fmt::format("{}: {}", names[i], e.what()) : std::string(e.what()));
    }
  }
}

PoolingRun::~PoolingRun() { cancel(); }

void PoolingRun::cancel() {
  for (size_t i = 0; i < streams_.size(); ++i)
    if (!finished_[i]) service_.cancel(streams_[i]->request_id());
}

std::vector<std::vector<float>> PoolingRun::collect(const ClientWatch& client) {
  std::vector<std::vector<float>> results(streams_.size());
  std::string error;
  for (size_t i = 0; i < streams_.size(); ++i) {
    while (!finished_[i]) {
      if (client.gone()) {
        cancel();
        return {};
      }
      // Short waits, so a client that leaves cancels the rest within one of them.
      std::optional<RequestUpdate> update = streams_[i]->pop(std::chrono::milliseconds(50));
      if (!update) continue;
      if (!update->pooled.empty()) results[i] = std::move(update->pooled);
      if (!update->error.empty() && error.empty()) error = update->error;
      finished_[i] = update->finished;
    }
  }
  if (!error.empty()) throw ApiError(500, "pooling failed: " + error, "server_error", "", "internal_error");
  for (const std::vector<float>& r : results)
    if (r.empty()) throw ApiError(500, "pooling failed: a request was cancelled before its result (the server may be shutting down)", "server_error");
  return results;
}

Json pooling_usage_json(int64_t num_prompt_tokens) {
  return Json{{"prompt_tokens", num_prompt_tokens}, {"total_tokens", num_prompt_tokens}, {"completion_tokens", 0}};
}

}  // namespace strata::server
