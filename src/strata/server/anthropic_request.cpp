#include "strata/server/anthropic_request.h"

#include <algorithm>

#include <fmt/format.h>

#include "strata/server/api_error.h"

namespace strata::server {
namespace {

constexpr size_t kMaxStopSequences = 16;

// A block's "type", or a 400 when the block is not an object with one.
std::string block_type(const Json& block, const std::string& where) {
  const Json* type = block.is_object() ? find_field(block, "type") : nullptr;
  if (type == nullptr || !type->is_string())
    throw bad_request(fmt::format("{} must be an object with a string 'type'", where), "messages");
  return type->get<std::string>();
}

std::string text_of(const Json& block, const std::string& where) {
  const Json* text = find_field(block, "text");
  if (text == nullptr || !text->is_string()) throw bad_request(fmt::format("{}.text must be a string", where), "messages");
  return text->get<std::string>();
}

std::string refusal_of(const std::string& type, const std::string& where) {
  if (type == "image" || type == "document")
    return fmt::format("{}: {} blocks are not supported here, so send text blocks (images go in user messages)",
                       where, type);
  return fmt::format("{}: blocks of type {} are not supported here", where, describe(Json(type)));
}

// A string, or text blocks joined by newlines (system prompts, tool results).
std::string text_content(const Json& content, const std::string& where, const char* param) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw bad_request(fmt::format("{} must be a string or an array of text blocks", where), param);
  std::string out;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where, i);
    const std::string type = block_type(content[i], at);
    if (type != "text") throw bad_request(refusal_of(type, at), param);
    if (!out.empty()) out += "\n";
    out += text_of(content[i], at);
  }
  return out;
}

Json tool_call_of(const Json& block, const std::string& where) {
  const Json* id = find_field(block, "id");
  const Json* name = find_field(block, "name");
  const Json* input = find_field(block, "input");
  if (id == nullptr || !id->is_string() || name == nullptr || !name->is_string() || input == nullptr ||
      !input->is_object())
    throw bad_request(fmt::format("{} must be {{\"type\": \"tool_use\", \"id\", \"name\", \"input\": {{...}}}}", where),
                      "messages");
  return {{"id", *id}, {"type", "function"}, {"function", {{"name", *name}, {"arguments", *input}}}};
}

Json tool_result_of(const Json& block, const std::string& where) {
  const Json* id = find_field(block, "tool_use_id");
  if (id == nullptr || !id->is_string())
    throw bad_request(fmt::format("{}.tool_use_id must be a string", where), "messages");
  const Json* content = find_field(block, "content");
  const std::string text = content == nullptr ? "" : text_content(*content, where + ".content", "messages");
  return {{"role", "tool"}, {"tool_call_id", *id}, {"content", text}};
}

// An image block as the chat path's image_url part: base64 sources as data URLs, url sources as
// they are (the chat path says which URLs it takes).
Json image_part_of(const Json& block, const std::string& where) {
  const Json* source = find_field(block, "source");
  const Json* kind = source != nullptr && source->is_object() ? find_field(*source, "type") : nullptr;
  std::string url;
  if (kind != nullptr && *kind == "base64" && source->contains("media_type") && (*source)["media_type"].is_string() &&
      source->contains("data") && (*source)["data"].is_string())
    url = "data:" + (*source)["media_type"].get<std::string>() + ";base64," + (*source)["data"].get<std::string>();
  else if (kind != nullptr && *kind == "url" && source->contains("url") && (*source)["url"].is_string())
    url = (*source)["url"].get<std::string>();
  else
    throw bad_request(fmt::format("{} must be {{\"type\": \"image\", \"source\": {{\"type\": \"base64\", "
                                  "\"media_type\": \"image/png\", \"data\": \"...\"}}}}", where), "messages");
  return {{"type", "image_url"}, {"image_url", {{"url", url}}}};
}

// One Anthropic message as chat messages: the tool results first (each its own tool
// message), then the text and tool calls. Thinking blocks sent back are dropped, as
// templates drop earlier turns' thinking.
void append_message(const Json& message, size_t index, Json& out) {
  const std::string where = fmt::format("messages[{}]", index);
  const Json* role = message.is_object() ? find_field(message, "role") : nullptr;
  if (role == nullptr || (*role != "user" && *role != "assistant"))
    throw bad_request(fmt::format("{}.role must be \"user\" or \"assistant\" (the system prompt goes in 'system')", where),
                      "messages");
  const Json* content = find_field(message, "content");
  if (content != nullptr && content->is_string()) {
    out.push_back({{"role", *role}, {"content", *content}});
    return;
  }
  if (content == nullptr || !content->is_array())
    throw bad_request(fmt::format("{}.content must be a string or an array of content blocks", where), "messages");
  const bool assistant = *role == "assistant";
  std::string text;
  Json parts = Json::array();  // text and image_url parts in order, when the message holds images
  Json calls = Json::array();
  size_t num_results = 0;
  for (size_t i = 0; i < content->size(); ++i) {
    const Json& block = (*content)[i];
    const std::string at = fmt::format("{}.content[{}]", where, i);
    const std::string type = block_type(block, at);
    if (type == "text") {
      text += (text.empty() ? "" : "\n") + text_of(block, at);
      parts.push_back({{"type", "text"}, {"text", text_of(block, at)}});
    }
    else if (type == "image" && !assistant) parts.push_back(image_part_of(block, at));
    else if (type == "tool_use" && assistant) calls.push_back(tool_call_of(block, at));
    else if (type == "tool_result" && !assistant) {
      out.push_back(tool_result_of(block, at));
      ++num_results;
    }
    else if ((type == "thinking" || type == "redacted_thinking") && assistant) continue;
    else throw bad_request(refusal_of(type, at), "messages");
  }
  const bool has_image = std::any_of(parts.begin(), parts.end(), [](const Json& p) { return p["type"] == "image_url"; });
  if (text.empty() && calls.empty() && !has_image && (assistant || num_results > 0)) return;
  Json m = {{"role", *role}, {"content", has_image ? parts : Json(text)}};
  if (!calls.empty()) m["tool_calls"] = std::move(calls);
  out.push_back(std::move(m));
}

Json read_system_and_messages(const Json& body) {
  Json out = Json::array();
  if (const Json* system = find_field(body, "system"))
    out.push_back({{"role", "system"}, {"content", text_content(*system, "system", "system")}});
  const Json* messages = find_field(body, "messages");
  if (messages == nullptr || !messages->is_array() || messages->empty())
    throw bad_request("'messages' must be a non-empty array of {role, content} objects", "messages");
  for (size_t i = 0; i < messages->size(); ++i) append_message((*messages)[i], i, out);
  // Anthropic continues a final assistant message; the template would start a new turn instead.
  if (*find_field(messages->back(), "role") == "assistant")  // append_message checked every role
    throw bad_request("a final assistant message (a prefill for the answer to continue) is not supported; end "
                      "'messages' with a user message",
                      "messages");
  return out;
}

// Custom tools ({name, description, input_schema}) as chat functions; server tools refused.
Json read_tools(const Json& body) {
  const Json* tools = find_field(body, "tools");
  if (tools == nullptr) return nullptr;
  if (!tools->is_array()) throw bad_request("'tools' must be an array of tools", "tools");
  Json out = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const Json& tool = (*tools)[i];
    const Json* type = tool.is_object() ? find_field(tool, "type") : nullptr;
    if (type != nullptr && *type != "custom")
      throw bad_request(fmt::format("tools[{}]: tools of type {} (server tools) are not supported; send custom tools "
                                    "{{\"name\", \"description\", \"input_schema\"}}",
                                    i, describe(*type)),
                        "tools");
    const Json* name = tool.is_object() ? find_field(tool, "name") : nullptr;
    const Json* schema = tool.is_object() ? find_field(tool, "input_schema") : nullptr;
    if (name == nullptr || !name->is_string() || schema == nullptr || !schema->is_object())
      throw bad_request(fmt::format("tools[{}] must be {{\"name\": ..., \"input_schema\": {{...}}}}", i), "tools");
    Json function = {{"name", *name}};
    if (const Json* description = find_field(tool, "description")) function["description"] = *description;
    function["parameters"] = *schema;
    if (const Json* strict = find_field(tool, "strict")) function["strict"] = *strict;
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

// {type: auto | any | tool | none} as chat's tool_choice; disable_parallel_tool_use as
// parallel_tool_calls false.
void read_tool_choice_into(const Json& body, Json& chat) {
  const Json* choice = find_field(body, "tool_choice");
  if (choice == nullptr) return;
  const Json* type = choice->is_object() ? find_field(*choice, "type") : nullptr;
  const Json* name = choice->is_object() ? find_field(*choice, "name") : nullptr;
  if (type != nullptr && *type == "auto") chat["tool_choice"] = "auto";
  else if (type != nullptr && *type == "none") chat["tool_choice"] = "none";
  else if (type != nullptr && *type == "any") chat["tool_choice"] = "required";
  else if (type != nullptr && *type == "tool" && name != nullptr && name->is_string())
    chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", *name}}}};
  else
    throw bad_request("'tool_choice' must be {\"type\": \"auto\"}, {\"type\": \"any\"}, {\"type\": \"none\"} or "
                      "{\"type\": \"tool\", \"name\": ...}",
                      "tool_choice");
  if (read_bool(*choice, "disable_parallel_tool_use").value_or(false)) chat["parallel_tool_calls"] = false;
}

// thinking {type: enabled | adaptive | disabled}: the template's enable_thinking where the
// server splits thinking off (as with chat_template_kwargs, which wins); else ignored.
void read_thinking_into(const Json& body, bool reasoning_parser, Json& chat) {
  const Json* thinking = find_field(body, "thinking");
  if (thinking == nullptr) return;
  const Json* type = thinking->is_object() ? find_field(*thinking, "type") : nullptr;
  if (type == nullptr || (*type != "enabled" && *type != "adaptive" && *type != "disabled"))
    throw bad_request("'thinking' must be {\"type\": \"enabled\", \"budget_tokens\": N}, {\"type\": \"adaptive\"} or "
                      "{\"type\": \"disabled\"}",
                      "thinking");
  if (!reasoning_parser) return;
  Json& kwargs = chat["chat_template_kwargs"];
  if (kwargs.is_null()) kwargs = Json::object();
  if (kwargs.is_object() && !kwargs.contains("enable_thinking")) kwargs["enable_thinking"] = *type != "disabled";
}

// output_config: effort as reasoning_effort, format {type: json_schema, schema} as the
// chat response_format.
void read_output_config_into(const Json& body, Json& chat) {
  const Json* config = find_field(body, "output_config");
  if (config == nullptr) return;
  if (!config->is_object()) throw bad_request("'output_config' must be an object", "output_config");
  for (const auto& [key, value] : config->items()) {
    if (value.is_null()) continue;
    if (key == "effort") {
      chat["reasoning_effort"] = value;
    } else if (key == "format") {
      const Json* schema = value.is_object() ? find_field(value, "schema") : nullptr;
      const Json* type = value.is_object() ? find_field(value, "type") : nullptr;
      if (type == nullptr || *type != "json_schema" || schema == nullptr)
        throw bad_request("'output_config.format' must be {\"type\": \"json_schema\", \"schema\": {...}}", "output_config");
      chat["response_format"] = {{"type", "json_schema"}, {"json_schema", {{"name", "output"}, {"schema", *schema}}}};
    } else {
      throw bad_request(fmt::format("'output_config.{}' is not supported; leave it out", key.substr(0, 64)),
                        "output_config");
    }
  }
}

Json read_stop_sequences(const Json& body) {
  const Json* stop = find_field(body, "stop_sequences");
  if (stop == nullptr) return nullptr;
  bool ok = stop->is_array() && stop->size() <= kMaxStopSequences;
  for (const Json& s : ok ? *stop : Json::array()) ok = ok && s.is_string();
  if (!ok)
    throw bad_request(fmt::format("'stop_sequences' must be an array of at most {} strings", kMaxStopSequences),
                      "stop_sequences");
  return *stop;
}

// The chat body of everything but the sampling fields.
Json conversation_body(const Json& body, bool reasoning_parser) {
  Json chat;
  chat["messages"] = read_system_and_messages(body);
  chat["tools"] = read_tools(body);
  read_tool_choice_into(body, chat);
  if (const Json* kwargs = find_field(body, "chat_template_kwargs")) chat["chat_template_kwargs"] = *kwargs;
  read_thinking_into(body, reasoning_parser, chat);
  read_output_config_into(body, chat);
  return chat;
}

}  // namespace

MessagesRequest read_messages_request(const Json& body, int64_t vocab_size, bool reasoning_parser) {
  const Json* max_tokens = find_field(body, "max_tokens");
  if (max_tokens == nullptr)
    throw bad_request("'max_tokens' is required: the most tokens to generate, e.g. 1024", "max_tokens");
  Json chat = conversation_body(body, reasoning_parser);
  chat["max_tokens"] = *max_tokens;
  for (const char* name : {"temperature", "top_p", "top_k", "stream"})
    if (const Json* value = find_field(body, name)) chat[name] = *value;
  MessagesRequest request;
  const Json stop = read_stop_sequences(body);
  if (!stop.is_null()) {
    chat["stop"] = stop;
    request.stop_sequences = stop.get<std::vector<std::string>>();
  }
  request.chat = read_chat_request(chat, vocab_size);
  return request;
}

ChatRenderRequest read_messages_conversation(const Json& body, bool reasoning_parser,
                                             std::vector<std::string>* image_urls) {
  return read_conversation(conversation_body(body, reasoning_parser), image_urls);
}

}  // namespace strata::server
