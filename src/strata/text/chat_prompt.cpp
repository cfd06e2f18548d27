#include "strata/text/chat_prompt.h"

#include <algorithm>

#include "strata/core/error.h"

namespace strata::text {

std::string render_conversation(const Tokenizer& tokenizer, ChatRenderRequest request) {
  if (tokenizer.chat_template().empty())
    fail("this model's tokenizer has no chat template; use a plain prompt (strata generate --prompt)");
  const TokenizerConfig& config = tokenizer.config();
  if (request.bos_token.empty() && config.bos_token) request.bos_token = *config.bos_token;
  if (request.eos_token.empty() && config.eos_token) request.eos_token = *config.eos_token;
  if (request.bos_token.empty() && tokenizer.bos_id())
    request.bos_token = tokenizer.id_to_token(*tokenizer.bos_id()).value_or("");
  if (request.eos_token.empty() && tokenizer.eos_id())
    request.eos_token = tokenizer.id_to_token(*tokenizer.eos_id()).value_or("");
  return render_chat(tokenizer.chat_template(), request);
}

std::vector<int32_t> encode_conversation(const Tokenizer& tokenizer, const ChatRenderRequest& request) {
  return tokenizer.encode(render_conversation(tokenizer, request), /*add_special_tokens=*/false);
}

std::vector<int32_t> stop_token_ids(const Tokenizer& tokenizer, const std::vector<int64_t>& config_eos) {
  std::vector<int32_t> ids;
  if (tokenizer.eos_id()) ids.push_back(*tokenizer.eos_id());
  for (int64_t id : config_eos)
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(static_cast<int32_t>(id));
  return ids;
}

}  // namespace strata::text
