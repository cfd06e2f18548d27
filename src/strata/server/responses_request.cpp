#include "strata/server/responses_request.h"

#include <algorithm>

#include <fmt/format.h>

#include "strata/server/api_error.h"
#include "strata/server/responses_input_items.h"

namespace strata::server {
namespace {

constexpr const char* kRoles[] = {"user", "system", "developer", "assistant"};

// Content parts joined by newlines; input_text, output_text (an earlier answer sent back)
// and refusal parts are text, anything else (images, files, audio) is refused.
std::string text_of_parts(const Json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw bad_request(fmt::format("{}.content must be a string or an array of parts", where), "input");
  std::string out;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    const Json* type = part.is_object() ? find_field(part, "type") : nullptr;
    const bool text = type != nullptr && (*type == "input_text" || *type == "output_text" || *type == "text");
    const bool refusal = type != nullptr && *type == "refusal";
    const char* key = refusal ? "refusal" : "text";
    if (!text && !refusal)
      throw bad_request(fmt::format("{}.content[{}]: parts of type {} are not supported here, so send input_text "
                                    "parts (input_image parts go in user messages)",
                                    where, i, type != nullptr ? describe(*type) : "(none)"),
                        "input");
    const Json* value = find_field(part, key);
    if (value == nullptr || !value->is_string())
      throw bad_request(fmt::format("{}.content[{}].{} must be a string", where, i, key), "input");
    if (!out.empty()) out += "\n";
    out += value->get<std::string>();
  }
  return out;
}

// A user message's content with input_image parts: the chat path's text and image_url parts in
// order (images are read there); without images, the text as text_of_parts joins it.
Json message_content(const Json& content, const std::string& where, bool user) {
  const auto is_image = [](const Json& part) {
    return part.is_object() && part.contains("type") && part["type"] == "input_image";
  };
  if (!user || !content.is_array() || std::none_of(content.begin(), content.end(), is_image))
    return text_of_parts(content, where);
  Json parts = Json::array();
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    if (!is_image(part)) {
      parts.push_back({{"type", "text"}, {"text", text_of_parts(Json::array({part}), where)}});
      continue;
    }
    const Json* url = find_field(part, "image_url");
    if (url == nullptr || !url->is_string())
      throw bad_request(fmt::format("{}.content[{}]: an input_image part needs 'image_url' (a data: URL); file_id "
                                    "images are not supported", where, i), "input");
    parts.push_back({{"type", "image_url"}, {"image_url", {{"url", *url}}}});
  }
  return parts;
}

const std::string& string_field(const Json& item, const char* name, const std::string& where) {
  const Json* value = find_field(item, name);
  if (value == nullptr || !value->is_string())
    throw bad_request(fmt::format("{}.{} must be a string", where, name), "input");
  return value->get_ref<const std::string&>();
}

// A function_call item joins the assistant message before it (calls made together).
void append_function_call(const Json& item, const std::string& where, Json& out) {
  Json call = {{"id", string_field(item, "call_id", where)},
               {"type", "function"},
               {"function", {{"name", string_field(item, "name", where)},
                             {"arguments", string_field(item, "arguments", where)}}}};
  if (out.empty() || out.back()["role"] != "assistant") out.push_back({{"role", "assistant"}, {"content", ""}});
  Json& last = out.back();
  if (!last.contains("tool_calls")) last["tool_calls"] = Json::array();
  last["tool_calls"].push_back(std::move(call));
}

void append_item(const Json& item, size_t index, Json& out) {
  const std::string where = fmt::format("input[{}]", index);
  if (!item.is_object()) throw bad_request(fmt::format("{} must be an object", where), "input");
  const Json* type = find_field(item, "type");
  const Json* role = find_field(item, "role");
  if (role != nullptr && (type == nullptr || *type == "message")) {
    if (!role->is_string() || std::find(std::begin(kRoles), std::end(kRoles), role->get<std::string>()) == std::end(kRoles))
      throw bad_request(fmt::format("{}.role must be one of user, system, developer, assistant", where), "input");
    const Json* content = find_field(item, "content");
    out.push_back({{"role", *role}, {"content", content == nullptr ? Json("") : message_content(*content, where,
                                                                                              *role == "user")}});
  } else if (type != nullptr && *type == "function_call") {
    append_function_call(item, where, out);
  } else if (type != nullptr && *type == "function_call_output") {
    const Json* output = find_field(item, "output");
    const std::string text = output == nullptr ? "" : text_of_parts(*output, where + ".output");
    out.push_back({{"role", "tool"}, {"tool_call_id", string_field(item, "call_id", where)}, {"content", text}});
  } else if (type != nullptr && *type == "reasoning") {
    return;  // earlier thinking sent back: templates drop it from past turns
  } else {
    throw bad_request(fmt::format("{}: items of type {} are not supported; send messages, function_call and "
                                  "function_call_output items",
                                  where, type != nullptr ? describe(*type) : "(none)"),
                      "input");
  }
}

Json read_input(const Json& body) {
  const Json* input = find_field(body, "input");
  if (input == nullptr) throw bad_request("'input' is required: a string or an array of input items", "input");
  if (input->is_string()) return Json::array({{{"role", "user"}, {"content", *input}}});
  if (!input->is_array()) throw bad_request("'input' must be a string or an array of input items", "input");
  Json out = Json::array();
  for (size_t i = 0; i < input->size(); ++i) append_item((*input)[i], i, out);
  return out;
}

Json read_tools(const Json& body) {
  const Json* tools = find_field(body, "tools");
  if (tools == nullptr) return nullptr;
  if (!tools->is_array()) throw bad_request("'tools' must be an array of function tools", "tools");
  Json out = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const Json& tool = (*tools)[i];
    const Json* type = tool.is_object() ? find_field(tool, "type") : nullptr;
    if (type == nullptr || *type != "function")
      throw bad_request(fmt::format("tools[{}]: only {{\"type\": \"function\", \"name\", \"parameters\"}} tools are "
                                    "supported, got type {}",
                                    i, type != nullptr ? describe(*type) : "(none)"),
                        "tools");
    Json function;
    for (const char* key : {"name", "description", "parameters", "strict"})
      if (const Json* value = find_field(tool, key)) function[key] = *value;
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

void read_tool_choice_into(const Json& body, Json& chat) {
  const Json* choice = find_field(body, "tool_choice");
  if (choice == nullptr) return;
  if (choice->is_string()) {
    chat["tool_choice"] = *choice;  // auto, none, required: read_tool_choice checks
    return;
  }
  const Json* type = choice->is_object() ? find_field(*choice, "type") : nullptr;
  const Json* name = choice->is_object() ? find_field(*choice, "name") : nullptr;
  if (type == nullptr || *type != "function" || name == nullptr || !name->is_string())
    throw bad_request("'tool_choice' must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", \"name\": ...}",
                      "tool_choice");
  chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", *name}}}};
}

// text.format as chat's response_format; reasoning.effort as reasoning_effort.
void read_text_and_reasoning_into(const Json& body, Json& chat) {
  if (const Json* text = find_field(body, "text")) {
    if (!text->is_object()) throw bad_request("'text' must be an object", "text");
    if (find_field(*text, "verbosity") != nullptr)
      throw bad_request("'text.verbosity' is not supported; leave it out", "text");
    const Json* format = find_field(*text, "format");
    const Json* type = format != nullptr && format->is_object() ? find_field(*format, "type") : nullptr;
    if (type != nullptr && *type == "json_schema") {
      const Json* name = find_field(*format, "name");
      Json schema = {{"name", name != nullptr ? *name : Json("output")}};
      if (const Json* s = find_field(*format, "schema")) schema["schema"] = *s;
      chat["response_format"] = {{"type", "json_schema"}, {"json_schema", std::move(schema)}};
    } else if (type != nullptr && (*type == "text" || *type == "json_object")) {
      chat["response_format"] = {{"type", *type}};
    } else if (format != nullptr) {
      throw bad_request("'text.format' must be {\"type\": \"text\"}, {\"type\": \"json_object\"} or "
                        "{\"type\": \"json_schema\", \"name\": ..., \"schema\": {...}}",
                        "text");
    }
  }
  if (const Json* reasoning = find_field(body, "reasoning")) {
    if (!reasoning->is_object()) throw bad_request("'reasoning' must be an object", "reasoning");
    for (const auto& [key, value] : reasoning->items())
      if (!value.is_null() && key != "effort")
        throw bad_request(fmt::format("'reasoning.{}' is not supported; only 'effort' is", key.substr(0, 64)),
                          "reasoning");
    if (const Json* effort = find_field(*reasoning, "effort")) chat["reasoning_effort"] = *effort;
  }
}

// The conversation previous_response_id names, or a 400 when it is not (or no longer) kept.
Json previous_conversation(const Json& body, const ResponseStore& store) {
  const std::optional<std::string> id = read_string(body, "previous_response_id");
  if (!id) return Json::array();
  std::optional<StoredResponse> stored = store.get(*id);
  if (!stored)
    throw ApiError(400,
                   fmt::format("Previous response with id {} not found: it was never stored (store false), was "
                               "deleted, or is older than the last {} responses this server keeps",
                               describe(Json(*id)), store.limits().max_responses),
                   "invalid_request_error", "previous_response_id", "previous_response_not_found");
  return std::move(stored->conversation);
}

}  // namespace

ResponsesRequest read_responses_request(const Json& body, int64_t vocab_size, const ResponseStore& store) {
  ResponsesRequest request;
  request.conversation = previous_conversation(body, store);
  for (Json& m : read_input(body)) request.conversation.push_back(std::move(m));
  if (request.conversation.empty()) throw bad_request("'input' must hold at least one item", "input");
  request.input_items = input_item_records(*find_field(body, "input"));
  Json chat;
  chat["messages"] = Json::array();
  if (const std::optional<std::string> instructions = read_string(body, "instructions"))
    chat["messages"].push_back({{"role", "system"}, {"content", *instructions}});
  for (const Json& m : request.conversation) chat["messages"].push_back(m);
  chat["tools"] = read_tools(body);
  read_tool_choice_into(body, chat);
  read_text_and_reasoning_into(body, chat);
  if (const Json* max_tokens = find_field(body, "max_output_tokens")) chat["max_tokens"] = *max_tokens;
  for (const char* name : {"temperature", "top_p", "stream", "parallel_tool_calls"})
    if (const Json* value = find_field(body, name)) chat[name] = *value;
  request.store = read_bool(body, "store").value_or(true);
  request.chat = read_chat_request(chat, vocab_size);
  return request;
}

}  // namespace strata::server
