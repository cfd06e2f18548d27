#include "strata/text/chat_prompt.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "strata/core/error.h"

namespace strata::text {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view strip(std::string_view s, bool left, bool right) {
  while (left && !s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (right && !s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// The text of the last message: its content, or its last text part.
std::string final_message_text(const nlohmann::ordered_json& messages) {
  const nlohmann::ordered_json* content = nullptr;
  if (!messages.empty() && messages.back().is_object())
    if (const auto it = messages.back().find("content"); it != messages.back().end()) content = &*it;
  if (content != nullptr && content->is_string()) return content->get<std::string>();
  if (content != nullptr && content->is_array())
    for (auto part = content->rbegin(); part != content->rend(); ++part)
      if (part->is_object() && part->contains("text") && (*part)["text"].is_string()) return (*part)["text"].get<std::string>();
  fail("continue_final_message: the last message has no text to continue");
}

// The rendered prompt cut right after the last message's text, as transformers'
// apply_chat_template(continue_final_message=True) cuts it (the end-of-turn markup dropped).
std::string cut_after_final_message(const std::string& rendered, const nlohmann::ordered_json& messages) {
  const std::string final_text = final_message_text(messages);
  const std::string_view stripped = strip(final_text, true, true);
  const size_t at = rendered.rfind(stripped);
  if (at == std::string::npos)
    fail("continue_final_message: the last message does not appear in the prompt the chat template renders; "
         "use a template that writes the message's content as it is");
  const std::string_view left_stripped = strip(final_text, true, false);
  const bool kept_whole = rendered.compare(at, left_stripped.size(), left_stripped) == 0;
  return rendered.substr(0, at + (kept_whole ? left_stripped.size() : stripped.size()));
}

}  // namespace

std::string render_conversation(const Tokenizer& tokenizer, ChatRenderRequest request,
                                const ChatPromptOptions& options) {
  const std::string& chat_template = options.chat_template.empty() ? tokenizer.chat_template() : options.chat_template;
  if (chat_template.empty())
    fail("this model's tokenizer has no chat template; use a plain prompt (strata generate --prompt), or give a "
         "chat template");
  if (options.continue_final_message && request.add_generation_prompt)
    fail("continue_final_message and add_generation_prompt cannot both be true: continue the last message, or "
         "start a new assistant turn");
  const TokenizerConfig& config = tokenizer.config();
  if (request.bos_token.empty() && config.bos_token) request.bos_token = *config.bos_token;
  if (request.eos_token.empty() && config.eos_token) request.eos_token = *config.eos_token;
  if (request.bos_token.empty() && tokenizer.bos_id())
    request.bos_token = tokenizer.id_to_token(*tokenizer.bos_id()).value_or("");
  if (request.eos_token.empty() && tokenizer.eos_id())
    request.eos_token = tokenizer.id_to_token(*tokenizer.eos_id()).value_or("");
  const std::string rendered = render_chat(chat_template, request);
  return options.continue_final_message ? cut_after_final_message(rendered, request.messages) : rendered;
}

std::vector<int32_t> encode_conversation(const Tokenizer& tokenizer, const ChatRenderRequest& request,
                                         const ChatPromptOptions& options) {
  return tokenizer.encode(render_conversation(tokenizer, request, options), /*add_special_tokens=*/false);
}

std::string load_chat_template(const std::string& file_or_template) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(file_or_template, ec)) {
    std::ifstream in(file_or_template, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  if (file_or_template.find_first_of("{}\n") != std::string::npos) return file_or_template;
  fail("chat template '{}' looks like a file path, but there is no readable file there; give the path of a Jinja "
       "file or the template's text", file_or_template);
}

std::vector<int32_t> stop_token_ids(const Tokenizer& tokenizer, const std::vector<int64_t>& config_eos) {
  std::vector<int32_t> ids;
  if (tokenizer.eos_id()) ids.push_back(*tokenizer.eos_id());
  for (int64_t id : config_eos)
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(static_cast<int32_t>(id));
  return ids;
}

}  // namespace strata::text
