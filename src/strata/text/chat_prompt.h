// From a conversation to prompt token ids: the chat template rendered as transformers'
// apply_chat_template does, then encoded without adding special tokens (the template
// writes them), so the ids equal transformers' apply_chat_template(tokenize=True).
#pragma once

#include <vector>

#include "strata/text/chat_template.h"
#include "strata/text/tokenizer.h"

namespace strata::text {

// Throws an Error when the tokenizer has no chat template.
std::string render_conversation(const Tokenizer& tokenizer, ChatRenderRequest request);
std::vector<int32_t> encode_conversation(const Tokenizer& tokenizer, const ChatRenderRequest& request);

// The ids that end generation: the tokenizer's eos plus the model config's eos ids.
std::vector<int32_t> stop_token_ids(const Tokenizer& tokenizer, const std::vector<int64_t>& config_eos);

}  // namespace strata::text
