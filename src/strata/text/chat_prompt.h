// From a conversation to prompt token ids: the chat template rendered as transformers'
// apply_chat_template does, then encoded without adding special tokens (the template
// writes them), so the ids equal transformers' apply_chat_template(tokenize=True).
#pragma once

#include <vector>

#include "strata/text/chat_template.h"
#include "strata/text/tokenizer.h"

namespace strata::text {

// What vLLM's chat() takes beyond the template's variables.
struct ChatPromptOptions {
  std::string chat_template;            // a Jinja template to render with; empty: the tokenizer's
  bool continue_final_message = false;  // the prompt ends inside the last message, which the model continues
};

// Throws an Error when there is no template, or continue_final_message cannot find the last
// message's text in the rendered prompt (or comes with add_generation_prompt).
std::string render_conversation(const Tokenizer& tokenizer, ChatRenderRequest request,
                                const ChatPromptOptions& options = {});
std::vector<int32_t> encode_conversation(const Tokenizer& tokenizer, const ChatRenderRequest& request,
                                         const ChatPromptOptions& options = {});

// A chat template given as vLLM's --chat-template takes it: a file's path, else the template itself
// (text holding '{', '}' or a newline). Throws an Error for anything else: a path that cannot be read.
std::string load_chat_template(const std::string& file_or_template);

// The ids that end generation: the tokenizer's eos plus the model config's eos ids.
std::vector<int32_t> stop_token_ids(const Tokenizer& tokenizer, const std::vector<int64_t>& config_eos);

}  // namespace strata::text
