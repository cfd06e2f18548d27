#include "strata/server/logprobs_json.h"

namespace strata::server {
namespace {

Json bytes_of(const std::string& text) {
  Json bytes = Json::array();
  for (unsigned char c : text) bytes.push_back(static_cast<int>(c));
  return bytes;
}

Json entry(const ServedModel& model, int32_t token_id, float logprob) {
  const std::string text = token_text(model, token_id);
  Json e;
  e["token"] = text;
  e["logprob"] = logprob;
  e["bytes"] = bytes_of(text);
  return e;
}

}  // namespace

std::string token_text(const ServedModel& model, int32_t token_id) {
  const int32_t ids[] = {token_id};
  return model.tokenizer->decode(ids, /*skip_special_tokens=*/false);
}

Json chat_logprobs_json(const ServedModel& model, std::span<const SampleResult> tokens) {
  Json content = Json::array();
  for (const SampleResult& s : tokens) {
    Json e = entry(model, s.token_id, s.logprob);
    e["top_logprobs"] = Json::array();
    for (const TokenLogprob& t : s.top) e["top_logprobs"].push_back(entry(model, t.token_id, t.logprob));
    content.push_back(std::move(e));
  }
  Json j;
  j["content"] = std::move(content);
  return j;
}

Json completion_logprobs_json(const ServedModel& model, std::span<const SampleResult> tokens, int64_t text_offset) {
  Json j;
  j["tokens"] = Json::array();
  j["token_logprobs"] = Json::array();
  j["top_logprobs"] = Json::array();
  j["text_offset"] = Json::array();
  for (const SampleResult& s : tokens) {
    const std::string text = token_text(model, s.token_id);
    j["tokens"].push_back(text);
    j["token_logprobs"].push_back(s.logprob);
    Json top = Json::object();
    for (const TokenLogprob& t : s.top) top[token_text(model, t.token_id)] = t.logprob;
    j["top_logprobs"].push_back(std::move(top));
    j["text_offset"].push_back(text_offset);
    text_offset += static_cast<int64_t>(text.size());
  }
  return j;
}

}  // namespace strata::server
