#include "strata/server/prompt_logprobs_json.h"

#include <algorithm>
#include <string>

#include "strata/server/logprobs_json.h"

namespace strata::server {
namespace {

Json vllm_entry(const ServedModel& model, float logprob, int32_t rank, int32_t token_id) {
  return Json{{"logprob", logprob}, {"rank", rank}, {"decoded_token", token_text(model, token_id)}};
}

size_t shown(const PromptLogprob& entry, int32_t num_top) {
  return std::min(entry.top.size(), static_cast<size_t>(std::max(num_top, 0)));
}

}  // namespace

Json vllm_prompt_logprobs_json(const ServedModel& model, std::span<const PromptLogprob> entries, int32_t num_top) {
  Json out = Json::array({nullptr});
  for (const PromptLogprob& entry : entries) {
    Json position = Json::object();
    for (size_t k = 0; k < shown(entry, num_top); ++k) {
      const TokenLogprob& t = entry.top[k];
      position[std::to_string(t.token_id)] = vllm_entry(model, t.logprob, static_cast<int32_t>(k) + 1, t.token_id);
    }
    position[std::to_string(entry.token_id)] = vllm_entry(model, entry.logprob, entry.rank, entry.token_id);
    out.push_back(std::move(position));
  }
  return out;
}

Json echo_logprobs_json(const ServedModel& model, const EchoLogprobs& echo, Json generated) {
  Json j{{"tokens", Json::array()}, {"token_logprobs", Json::array()}, {"top_logprobs", Json::array()},
         {"text_offset", Json::array()}};
  int64_t offset = 0;
  for (size_t p = 0; p < echo.prompt_ids.size(); ++p) {
    const std::string text = token_text(model, echo.prompt_ids[p]);
    j["tokens"].push_back(text);
    j["text_offset"].push_back(offset);
    offset += static_cast<int64_t>(text.size());
    if (p == 0 || p > echo.entries.size()) {  // the first token has no context to be scored in
      j["token_logprobs"].push_back(nullptr);
      j["top_logprobs"].push_back(nullptr);
      continue;
    }
    const PromptLogprob& entry = echo.entries[p - 1];
    j["token_logprobs"].push_back(entry.logprob);
    Json top = Json::object();
    for (size_t k = 0; k < shown(entry, echo.num_top); ++k) top[token_text(model, entry.top[k].token_id)] = entry.top[k].logprob;
    j["top_logprobs"].push_back(std::move(top));
  }
  for (const char* key : {"tokens", "token_logprobs", "top_logprobs", "text_offset"})
    for (Json& v : generated[key]) j[key].push_back(std::move(v));
  return j;
}

}  // namespace strata::server
