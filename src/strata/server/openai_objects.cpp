#include "strata/server/openai_objects.h"

#include <chrono>

namespace strata::server {

Json envelope_json(const Envelope& envelope, const char* object) {
  Json j;
  j["id"] = envelope.id;
  j["object"] = object;
  j["created"] = envelope.created;
  j["model"] = envelope.model;
  return j;
}

Json usage_json(const Usage& usage) {
  Json j;
  j["prompt_tokens"] = usage.prompt_tokens;
  j["completion_tokens"] = usage.completion_tokens;
  j["total_tokens"] = usage.prompt_tokens + usage.completion_tokens;
  j["prompt_tokens_details"]["cached_tokens"] = usage.cached_tokens;
  return j;
}

Json finish_reason_json(FinishReason reason) {
  if (reason == FinishReason::kNone) return nullptr;
  return finish_reason_name(reason);
}

std::string dump_json(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string sse_event(const Json& data) { return "data: " + dump_json(data) + "\n\n"; }

std::string sse_named_event(std::string_view name, const Json& data) {
  return "event: " + std::string(name) + "\n" + sse_event(data);
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace strata::server
