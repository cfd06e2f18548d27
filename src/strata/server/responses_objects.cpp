#include "strata/server/responses_objects.h"

#include "strata/server/random_id.h"

namespace strata::server {
namespace {

Json field_or(const Json& body, const char* name, Json fallback) {
  const Json* value = find_field(body, name);
  return value != nullptr ? *value : fallback;
}

}  // namespace

Json response_request_fields(const Json& body, bool store) {
  Json f;
  f["instructions"] = field_or(body, "instructions", nullptr);
  f["max_output_tokens"] = field_or(body, "max_output_tokens", nullptr);
  f["max_tool_calls"] = nullptr;
  f["parallel_tool_calls"] = field_or(body, "parallel_tool_calls", true);
  f["previous_response_id"] = field_or(body, "previous_response_id", nullptr);
  Json reasoning = {{"effort", nullptr}, {"summary", nullptr}};
  if (const Json* r = find_field(body, "reasoning"); r != nullptr && r->is_object())
    reasoning["effort"] = field_or(*r, "effort", nullptr);
  f["reasoning"] = std::move(reasoning);
  f["service_tier"] = "default";
  f["store"] = store;
  f["temperature"] = field_or(body, "temperature", 1.0);
  f["text"] = field_or(body, "text", Json{{"format", {{"type", "text"}}}});
  f["tool_choice"] = field_or(body, "tool_choice", "auto");
  f["tools"] = field_or(body, "tools", Json::array());
  f["top_p"] = field_or(body, "top_p", 1.0);
  f["truncation"] = "disabled";
  f["user"] = field_or(body, "user", nullptr);
  f["metadata"] = field_or(body, "metadata", Json::object());
  return f;
}

Json response_json(const ResponseEnvelope& envelope, const ResponseState& state) {
  Json j;
  j["id"] = envelope.id;
  j["object"] = "response";
  j["created_at"] = envelope.created_at;
  j["status"] = state.status;
  j["background"] = false;
  j["error"] = state.error;
  j["incomplete_details"] = std::string_view(state.status) == "incomplete"
                                ? Json{{"reason", "max_output_tokens"}} : Json(nullptr);
  j["model"] = envelope.model;
  j["output"] = state.output;
  j["usage"] = state.usage;
  for (const auto& [key, value] : envelope.request_fields.items()) j[key] = value;
  return j;
}

Json responses_usage_json(const Usage& usage) {
  Json j;
  j["input_tokens"] = usage.prompt_tokens;
  j["input_tokens_details"]["cached_tokens"] = usage.cached_tokens;
  j["output_tokens"] = usage.completion_tokens;
  j["output_tokens_details"]["reasoning_tokens"] = 0;
  j["total_tokens"] = usage.prompt_tokens + usage.completion_tokens;
  return j;
}

Json reasoning_item(const std::string& id, const std::string& text, const char* status) {
  Json content = Json::array();
  if (!text.empty()) content.push_back({{"type", "reasoning_text"}, {"text", text}});
  return {{"type", "reasoning"}, {"id", id}, {"summary", Json::array()}, {"content", std::move(content)},
          {"status", status}};
}

Json output_text_part(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", Json::array()}, {"logprobs", Json::array()}};
}

Json message_item(const std::string& id, const std::string& text, const char* status) {
  Json content = Json::array();
  if (std::string_view(status) != "in_progress") content.push_back(output_text_part(text));
  return {{"type", "message"}, {"id", id}, {"status", status}, {"role", "assistant"}, {"content", std::move(content)}};
}

Json function_call_item(const std::string& id, const ToolCall& call, const char* status) {
  const bool done = std::string_view(status) != "in_progress";
  return {{"type", "function_call"}, {"id", id}, {"call_id", call.id}, {"name", call.name},
          {"arguments", done ? call.arguments : ""}, {"status", status}};
}

Json output_items(const ChatAnswer& answer, bool incomplete) {
  const char* status = incomplete ? "incomplete" : "completed";
  Json items = Json::array();
  if (!answer.reasoning.empty()) items.push_back(reasoning_item("rs_" + random_alnum(24), answer.reasoning, status));
  if (!answer.content.empty() || answer.tool_calls.empty())
    items.push_back(message_item("msg_" + random_alnum(24), answer.content, status));
  for (const ToolCall& call : answer.tool_calls) items.push_back(function_call_item("fc_" + random_alnum(24), call, status));
  return items;
}

Json assistant_message(const std::string& content, const std::vector<ToolCall>& calls) {
  Json m = {{"role", "assistant"}, {"content", content}};
  if (calls.empty()) return m;
  m["tool_calls"] = Json::array();
  for (const ToolCall& call : calls)
    m["tool_calls"].push_back(
        {{"id", call.id}, {"type", "function"}, {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
  return m;
}

}  // namespace strata::server
