#include "strata/server/chat_request.h"

#include "strata/core/error.h"

#include <algorithm>

#include <fmt/format.h>

#include "strata/server/api_error.h"
#include "strata/server/json_parse.h"
#include "strata/server/structured_outputs.h"

namespace strata::server {
namespace {

constexpr const char* kRoles[] = {"system", "developer", "user", "assistant", "tool"};

// The URL of an image_url part: {"image_url": {"url": ...}} or {"image_url": "..."}.
std::string image_part_url(const Json& part, size_t index) {
  const Json* image = find_field(part, "image_url");
  const Json* url = image != nullptr && image->is_object() ? find_field(*image, "url") : image;
  if (url == nullptr || !url->is_string())
    throw bad_request(fmt::format("messages[{}].content: an image part reads {{\"type\": \"image_url\", "
                                  "\"image_url\": {{\"url\": \"data:image/png;base64,...\"}}}}", index),
                      "messages");
  return url->get<std::string>();
}

// [{type: text, text}, ...] -> the texts joined by newlines, as vLLM does. With image_url parts the
// parts stay a list for the template, images as {"type": "image"} (their URLs go to image_urls).
Json read_content_parts(const Json& parts, size_t index, std::vector<std::string>& image_urls) {
  std::string text;
  Json kept = Json::array();
  bool has_image = false;
  for (const Json& part : parts) {
    const Json* type = part.is_object() ? find_field(part, "type") : nullptr;
    if (type != nullptr && *type == "image_url") {
      image_urls.push_back(image_part_url(part, index));
      kept.push_back(Json{{"type", "image"}});
      has_image = true;
      continue;
    }
    if (type == nullptr || !type->is_string() || *type != "text" || !part.contains("text") ||
        !part["text"].is_string())
      throw bad_request(fmt::format("messages[{}].content: parts must be {{\"type\": \"text\", \"text\": \"...\"}} "
                                    "or {{\"type\": \"image_url\", \"image_url\": {{\"url\": \"...\"}}}}",
                                    index),
                        "messages");
    if (!text.empty()) text += "\n";
    text += part["text"].get<std::string>();
    kept.push_back(Json{{"type", "text"}, {"text", part["text"]}});
  }
  return has_image ? kept : Json(text);
}

// Assistant tool_calls carry arguments as JSON text; templates expect objects. The text is
// client data too: its nesting is bounded like the body's.
void arguments_to_objects(Json& message, size_t index) {
  Json* calls = message.contains("tool_calls") ? &message["tool_calls"] : nullptr;
  if (calls == nullptr || !calls->is_array()) return;
  for (Json& call : *calls) {
    if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) continue;
    Json& fn = call["function"];
    if (!fn.contains("arguments") || !fn["arguments"].is_string()) continue;
    ParsedJson parsed = parse_json(fn["arguments"].get_ref<const std::string&>(), kMaxJsonNesting);
    if (parsed.too_deep)
      throw bad_request(fmt::format("messages[{}].tool_calls: in the arguments, {}", index, parsed.error), "messages");
    if (parsed.value && parsed.value->is_object()) fn["arguments"] = std::move(*parsed.value);
  }
}

Json read_messages(const Json& body, std::vector<std::string>& image_urls) {
  const Json* messages = find_field(body, "messages");
  if (messages == nullptr || !messages->is_array() || messages->empty())
    throw bad_request("'messages' must be a non-empty array of {role, content} objects", "messages");
  Json out = Json::array();
  for (size_t i = 0; i < messages->size(); ++i) {
    Json m = (*messages)[i];
    if (!m.is_object()) throw bad_request(fmt::format("messages[{}] must be an object", i), "messages");
    const Json* role = find_field(m, "role");
    if (role == nullptr || !role->is_string() ||
        std::find(std::begin(kRoles), std::end(kRoles), role->get<std::string>()) == std::end(kRoles))
      throw bad_request(fmt::format("messages[{}].role must be one of system, developer, user, assistant, tool", i),
                        "messages");
    const Json* content = find_field(m, "content");
    // Null content (an assistant turn of only tool calls) is empty text: templates test it
    // with `in` and string filters, which fail on None.
    if (content == nullptr) m["content"] = "";
    else if (content->is_array()) m["content"] = read_content_parts(*content, i, image_urls);
    else if (!content->is_string())
      throw bad_request(
          fmt::format("messages[{}].content must be a string or an array of text and image_url parts", i), "messages");
    arguments_to_objects(m, i);
    out.push_back(std::move(m));
  }
  return out;
}

Json read_tools(const Json& body) {
  const Json* tools = find_field(body, "tools");
  if (tools == nullptr) return nullptr;
  if (!tools->is_array()) throw bad_request("'tools' must be an array of function tools", "tools");
  for (const Json& t : *tools) {
    const Json* fn = t.is_object() ? find_field(t, "function") : nullptr;
    if (fn == nullptr || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string() ||
        (t.contains("type") && t["type"] != "function"))
      throw bad_request("each tool must be {\"type\": \"function\", \"function\": {\"name\": ..., ...}}", "tools");
  }
  return tools->empty() ? Json() : *tools;
}

// What the output must be: free text, any JSON object, or JSON following a schema
// (constrained decoding enforces both).
void read_response_format(const Json& body, ChatRequest& chat) {
  const Json* format = find_field(body, "response_format");
  if (format == nullptr) return;
  const Json* type = format->is_object() ? find_field(*format, "type") : nullptr;
  if (type != nullptr && *type == "text") return;
  if (type != nullptr && *type == "json_object") {
    chat.json_object = true;
    return;
  }
  if (type == nullptr || *type != "json_schema")
    throw bad_request("'response_format' must be {\"type\": \"text\"}, {\"type\": \"json_object\"} or "
                      "{\"type\": \"json_schema\", \"json_schema\": {\"name\": ..., \"schema\": {...}}}",
                      "response_format");
  const Json* spec = find_field(*format, "json_schema");
  const Json* schema = spec != nullptr && spec->is_object() ? find_field(*spec, "schema") : nullptr;
  if (schema == nullptr) throw bad_request("'response_format.json_schema.schema' is missing", "response_format");
  chat.json_schema = compile_schema_field(*schema, "response_format");
}

// reasoning_effort reaches the template as a variable (gpt-oss templates read it), unless
// chat_template_kwargs sets one itself, as in vLLM.
void read_reasoning_effort(const Json& body, ChatRenderRequest& render) {
  const Json* effort = find_field(body, "reasoning_effort");
  if (effort == nullptr) return;
  if (!effort->is_string() || (*effort != "low" && *effort != "medium" && *effort != "high"))
    throw bad_request(fmt::format("'reasoning_effort' must be \"low\", \"medium\" or \"high\", got {}", describe(*effort)),
                      "reasoning_effort");
  if (!render.extra.contains("reasoning_effort")) render.extra["reasoning_effort"] = *effort;
}

}  // namespace

ChatRenderRequest read_conversation(const Json& body, std::vector<std::string>* image_urls) {
  ChatRenderRequest render;
  std::vector<std::string> urls;
  render.messages = read_messages(body, urls);
  if (image_urls != nullptr) *image_urls = std::move(urls);
  render.tools = read_tools(body);
  render.add_generation_prompt = read_bool(body, "add_generation_prompt").value_or(true);
  if (const Json* kwargs = find_field(body, "chat_template_kwargs")) {
    if (!kwargs->is_object()) throw bad_request("'chat_template_kwargs' must be an object", "chat_template_kwargs");
    render.extra = *kwargs;
  }
  read_reasoning_effort(body, render);
  return render;
}

ChatRequest read_chat_request(const Json& body, int64_t vocab_size) {
  ChatRequest chat;
  chat.render = read_conversation(body, &chat.image_urls);
  if (const Json* tmpl = find_field(body, "chat_template")) {
    if (!tmpl->is_string() || tmpl->get<std::string>().empty())
      throw bad_request("'chat_template' must be the text of a Jinja chat template", "chat_template");
    chat.prompt_options.chat_template = tmpl->get<std::string>();
  }
  chat.prompt_options.continue_final_message = read_bool(body, "continue_final_message").value_or(false);
  chat.tool_choice = read_tool_choice(body, chat.render.tools);
  chat.parse_tool_calls = !chat.render.tools.is_null() && chat.tool_choice.mode != ToolChoiceMode::kNone;
  read_response_format(body, chat);
  StructuredOutput structured = read_structured_outputs(body);
  const bool structured_given = structured.any();
  if (structured_given && (chat.json_object || chat.json_schema))
    throw bad_request("response_format and structured_outputs (or a guided_* field) both constrain the output; "
                      "give only one of them",
                      "structured_outputs");
  if (structured_given) {
    chat.json_object = structured.json_object;
    chat.json_schema = std::move(structured.json_schema);
    chat.grammar = std::move(structured.grammar);
  }
  if (chat.tool_choice.forces() && structured_given)
    throw bad_request("tool_choice forces a tool call and structured_outputs (or a guided_* field) constrains the "
                      "output too; give only one of them",
                      "structured_outputs");
  // response_format shapes the assistant's text, and a forced call's turn has none (content is
  // null), so both hold, as on OpenAI and vLLM; instructor's RESPONSES_TOOLS mode sends the pair.
  if (chat.tool_choice.forces()) {
    chat.json_object = false;
    chat.json_schema = nullptr;
  }
  chat.fields = read_generation_fields(body, vocab_size);
  if (chat.fields.request.max_tokens == 0)
    throw bad_request("'max_tokens' must be at least 1 on chat; 0 (scoring a prompt) is for /v1/completions with echo",
                      "max_tokens");
  chat.stream = read_bool(body, "stream").value_or(false);
  if (const Json* options = find_field(body, "stream_options")) {
    if (!options->is_object()) throw bad_request("'stream_options' must be an object", "stream_options");
    chat.include_usage = read_bool(*options, "include_usage").value_or(false);
  }
  if (chat.stream && chat.fields.request.prompt_logprobs >= 0)
    throw bad_request("'prompt_logprobs' is returned without streaming only; set 'stream' to false", "prompt_logprobs");
  chat.include_reasoning = read_bool(body, "include_reasoning").value_or(true);
  chat.logprobs = read_bool(body, "logprobs").value_or(false);
  const std::optional<int64_t> top = read_int(body, "top_logprobs", 0, 20);
  if (top && !chat.logprobs) throw bad_request("'top_logprobs' needs 'logprobs': true", "top_logprobs");
  if (chat.logprobs) chat.fields.request.sampling.logprobs = static_cast<int32_t>(top.value_or(0));
  return chat;
}

}  // namespace strata::server
