#include "strata/server/generation_fields.h"

#include <charconv>
#include <map>

#include <fmt/format.h>

#include "strata/server/api_error.h"

namespace strata::server {
namespace {

constexpr size_t kMaxStopStrings = 16;

std::vector<std::string> read_stop(const Json& body) {
  const Json* stop = find_field(body, "stop");
  if (stop == nullptr) return {};
  if (stop->is_string()) {
    if (stop->get<std::string>().empty()) return {};
    return {stop->get<std::string>()};
  }
  if (!stop->is_array() || stop->size() > kMaxStopStrings)
    throw bad_request(fmt::format("'stop' must be a string or an array of at most {} strings", kMaxStopStrings),
                      "stop");
  std::vector<std::string> out;
  for (const Json& s : *stop) {
    if (!s.is_string()) throw bad_request("'stop' entries must be strings", "stop");
    if (!s.get<std::string>().empty()) out.push_back(s.get<std::string>());
  }
  return out;
}

SamplingParams read_sampling(const Json& body) {
  SamplingParams p;
  p.temperature = static_cast<float>(read_number(body, "temperature", 0.0, 100.0).value_or(1.0));
  p.top_p = static_cast<float>(read_number(body, "top_p", 0.0, 1.0).value_or(1.0));
  if (p.top_p <= 0.0f) throw bad_request("'top_p' must be in (0, 1], got 0", "top_p");
  p.top_k = static_cast<int32_t>(read_int(body, "top_k", -1, INT32_MAX).value_or(0));
  p.min_p = static_cast<float>(read_number(body, "min_p", 0.0, 1.0).value_or(0.0));
  p.presence_penalty = static_cast<float>(read_number(body, "presence_penalty", -2.0, 2.0).value_or(0.0));
  p.frequency_penalty = static_cast<float>(read_number(body, "frequency_penalty", -2.0, 2.0).value_or(0.0));
  p.repetition_penalty = static_cast<float>(read_number(body, "repetition_penalty", 0.0, 100.0).value_or(1.0));
  if (p.repetition_penalty <= 0.0f) throw bad_request("'repetition_penalty' must be > 0", "repetition_penalty");
  if (auto seed = read_int(body, "seed", INT64_MIN, INT64_MAX)) p.seed = static_cast<uint64_t>(*seed);
  return p;
}

// OpenAI's {"token id": bias}, ids as decimal strings; a repeated id keeps its last bias.
std::vector<LogitBias> read_logit_bias(const Json& body, int64_t vocab_size) {
  const Json* bias = find_field(body, "logit_bias");
  if (bias == nullptr) return {};
  if (!bias->is_object() || bias->size() > kMaxLogitBiasTokens)
    throw bad_request(fmt::format("'logit_bias' must be an object of at most {} entries mapping token ids (as "
                                  "strings) to biases in [-100, 100], got {}",
                                  kMaxLogitBiasTokens, describe(*bias)),
                      "logit_bias");
  std::map<int32_t, float> by_id;
  for (const auto& [key, value] : bias->items()) {
    int64_t id = -1;
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (error != std::errc() || end != key.data() + key.size() || key.empty() || id < 0 || id >= vocab_size)
      throw bad_request(fmt::format("'logit_bias' key {} is not a token id in [0, {})", describe(Json(key)), vocab_size),
                        "logit_bias");
    if (!value.is_number() || !(value.get<double>() >= -100.0 && value.get<double>() <= 100.0))
      throw bad_request(fmt::format("'logit_bias' value for token {} must be a number in [-100, 100], got {}", id,
                                    describe(value)),
                        "logit_bias");
    by_id[static_cast<int32_t>(id)] = static_cast<float>(value.get<double>());
  }
  std::vector<LogitBias> out;
  for (const auto& [id, b] : by_id) out.push_back({.token_id = id, .bias = b});
  return out;
}

}  // namespace

GenerationFields read_generation_fields(const Json& body, int64_t vocab_size) {
  GenerationFields f;
  GenerationRequest& r = f.request;
  r.sampling = read_sampling(body);
  r.sampling.logit_bias = read_logit_bias(body, vocab_size);
  std::optional<int64_t> max_tokens = read_int(body, "max_completion_tokens", 1, INT32_MAX);
  if (!max_tokens) max_tokens = read_int(body, "max_tokens", 0, INT32_MAX);  // 0: scoring a prompt (echo)
  f.max_tokens_given = max_tokens.has_value();
  r.max_tokens = static_cast<int32_t>(max_tokens.value_or(16));
  r.prompt_logprobs = static_cast<int32_t>(read_int(body, "prompt_logprobs", 0, kMaxPromptLogprobs).value_or(-1));
  r.stop = read_stop(body);
  if (const Json* ids = find_field(body, "stop_token_ids")) r.stop_token_ids = read_token_ids(*ids, "stop_token_ids", vocab_size);
  r.n = static_cast<int32_t>(read_int(body, "n", 1, int64_t{kMaxChoices}).value_or(1));
  r.ignore_eos = read_bool(body, "ignore_eos").value_or(false);
  r.skip_special_tokens = read_bool(body, "skip_special_tokens").value_or(true);
  r.priority = static_cast<int32_t>(read_int(body, "priority", INT32_MIN, INT32_MAX).value_or(0));
  return f;
}

GenerationRequest fit_to_context(const GenerationFields& fields, std::vector<int32_t> prompt_ids,
                                 const ContextFit& fit) {
  const int64_t num_prompt = static_cast<int64_t>(prompt_ids.size());
  if (num_prompt == 0) throw bad_request("the prompt is empty; give at least one token", fit.prompt_field);
  if (num_prompt >= fit.max_model_len)
    throw bad_request(fmt::format("This model's maximum context length is {} tokens. However, your prompt has "
                                  "{} tokens; shorten it so at least one token can be generated.",
                                  fit.max_model_len, num_prompt),
                      fit.prompt_field);
  GenerationRequest r = fields.request;
  r.prompt_ids = std::move(prompt_ids);
  const int32_t room = static_cast<int32_t>(fit.max_model_len - num_prompt);
  if (fields.max_tokens_given) {
    if (r.max_tokens > room)
      throw bad_request(fmt::format("This model's maximum context length is {} tokens. However, you requested {} "
                                    "tokens ({} in the prompt, {} for the completion); lower max_tokens to at "
                                    "most {}.",
                                    fit.max_model_len, num_prompt + r.max_tokens, num_prompt, r.max_tokens, room),
                        "max_tokens");
  } else {
    r.max_tokens = fit.default_max_tokens > 0 ? std::min(fit.default_max_tokens, room) : room;
  }
  return r;
}

}  // namespace strata::server
