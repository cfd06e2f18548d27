// Small pieces of OpenAI's response shapes shared by the endpoints: the envelope
// (id, object, created, model), usage, finish reasons, and server-sent-event framing.
#pragma once

#include <string>
#include <string_view>

#include "strata/engine/request.h"
#include "strata/server/generation_run.h"
#include "strata/server/json_fields.h"

namespace strata::server {

struct Envelope {
  std::string id;      // "chatcmpl-..." / "cmpl-..."
  int64_t created = 0;
  std::string model;
};

// {"id", "object", "created", "model"} ready for "choices" and "usage".
Json envelope_json(const Envelope& envelope, const char* object);
// {"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details": {"cached_tokens"}}
Json usage_json(const Usage& usage);
// "stop", "length", "abort", "error"; null while running.
Json finish_reason_json(FinishReason reason);

// Compact JSON text; invalid UTF-8 from the model is replaced, never thrown on.
std::string dump_json(const Json& j);
// "data: <json>\n\n"
std::string sse_event(const Json& data);
// "event: <name>\ndata: <json>\n\n", for streams whose clients dispatch on the event name.
std::string sse_named_event(std::string_view name, const Json& data);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

int64_t unix_now();

}  // namespace strata::server
