#include "strata/server/chat_run.h"

#include <algorithm>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/server/api_error.h"
#include "strata/server/tool_parsers/tool_parser_registry.h"
#include "strata/server/vision_prompt.h"
#include "strata/text/chat_prompt.h"

namespace strata::server {
namespace {

// A tag a template ends the prompt with, and harmony's last message header, fit in this.
constexpr size_t kPromptTailBytes = 256;

}  // namespace

std::vector<int32_t> encode_chat(const ServedModel& model, ChatRequest& chat, const char* field,
                                 std::shared_ptr<const MultimodalPrompt>* images) {
  const text::Tokenizer& tokenizer = require_tokenizer(model, field);
  if (!chat.image_urls.empty() && model.vision == nullptr)
    throw bad_request(fmt::format("the model '{}' takes text only; send the messages without images",
                                  model.served_name), field);
  if (!chat.prompt_options.chat_template.empty() && !model.trust_request_chat_template)
    throw bad_request("'chat_template' runs the client's template code on the server; start it with "
                      "--trust-request-chat-template to allow that, or leave the field out",
                      "chat_template");
  std::string prompt;
  try {
    prompt = text::render_conversation(tokenizer, chat.render, chat.prompt_options) + chat.tool_choice.forced_prefix;
  } catch (const Error& e) {
    throw bad_request(fmt::format("the chat template could not render these messages: {}", e.what()), field);
  }
  chat.prompt_tail = prompt.substr(prompt.size() - std::min(prompt.size(), kPromptTailBytes));
  std::vector<int32_t> ids;
  if (chat.image_urls.empty()) {
    ids = tokenizer.encode(prompt, /*add_special_tokens=*/false);
  } else if (images == nullptr) {  // the ids alone (counting tokens): the images are not encoded
    ids = tokenize_with_images(*model.vision, tokenizer, prompt, chat.image_urls, field);
  } else {
    VisionPrompt vision = encode_with_images(*model.vision, tokenizer, prompt, chat.image_urls, field);
    ids = std::move(vision.ids);
    *images = std::move(vision.images);
  }
  for (int32_t id : ids)
    if (id < 0 || id >= model.vocab_size)
      throw bad_request(fmt::format("the rendered prompt holds token id {}, outside the model's vocabulary of {} "
                                    "(the tokenizer does not match the model)",
                                    id, model.vocab_size),
                        field);
  return ids;
}

StartedChat start_chat(const ServedModel& model, ChatRequest& chat, const ChatStart& start) {
  const int32_t lora_slot = check_model_name(model, start.model_name);
  chat.tool_parser = model.tool_parser != nullptr ? model.tool_parser : &default_tool_parser();
  force_tool_calls(*chat.tool_parser, chat.render.tools, chat.tool_choice);
  const bool constrained =
      chat.json_object || chat.json_schema || chat.grammar || chat.tool_choice.forced || chat.tool_choice.forced_arguments ||
                           chat.tool_choice.forced_grammar;
  chat.reasoning = constrained ? ReasoningFormat::kNone : start.reasoning;
  // Harmony's markup and some families' tool-call markers are special tokens: the parsers
  // need them in the text, and drop them.
  if (chat.reasoning == ReasoningFormat::kHarmony || (chat.parse_tool_calls && chat.tool_parser->needs_special_tokens()))
    chat.fields.request.skip_special_tokens = false;
  std::shared_ptr<const MultimodalPrompt> images;
  GenerationRequest request =
      fit_to_context(chat.fields, encode_chat(model, chat, start.prompt_field, &images),
                     {.max_model_len = model.service->max_model_len(), .prompt_field = start.prompt_field});
  request.images = std::move(images);
  StartedChat started{.model = apply_lora_choice(model, lora_slot, request)};
  request.json_object = chat.json_object;
  request.json_schema = chat.json_schema ? chat.json_schema : chat.tool_choice.forced_arguments;
  request.tool_calls = chat.tool_choice.forced;
  request.grammar = chat.grammar ? chat.grammar : chat.tool_choice.forced_grammar;
  std::vector<GenerationRequest> requests;
  requests.push_back(std::move(request));
  started.run = std::make_unique<GenerationRun>(*model.service, std::move(requests));
  return started;
}

}  // namespace strata::server
