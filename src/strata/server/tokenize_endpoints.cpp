#include "strata/server/tokenize_endpoints.h"

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/server/api_error.h"
#include "strata/server/chat_request.h"
#include "strata/server/logprobs_json.h"
#include "strata/server/openai_objects.h"
#include "strata/server/vision_prompt.h"
#include "strata/text/chat_prompt.h"

namespace strata::server {

HttpReply tokenize(const ServedModel& model, const Json& body) {
  const std::optional<std::string> name = read_string(body, "model");
  check_model_name(model, name ? &*name : nullptr);
  std::vector<int32_t> ids;
  if (find_field(body, "messages") != nullptr) {
    const text::Tokenizer& tokenizer = require_tokenizer(model, "messages");
    std::vector<std::string> image_urls;
    const ChatRenderRequest render = read_conversation(body, &image_urls);
    if (!image_urls.empty() && model.vision == nullptr)
      throw bad_request(fmt::format("the model '{}' takes text only; send the messages without images",
                                    model.served_name), "messages");
    std::string text;
    try {
      text = text::render_conversation(tokenizer, render);
    } catch (const Error& e) {
      throw bad_request(fmt::format("the chat template could not render these messages: {}", e.what()), "messages");
    }
    // With images, the ids a chat request gets: each placeholder repeated per merged patch.
    ids = image_urls.empty() ? tokenizer.encode(text, read_bool(body, "add_special_tokens").value_or(false))
                             : tokenize_with_images(*model.vision, tokenizer, text, image_urls, "messages");
  } else {
    const std::optional<std::string> prompt = read_string(body, "prompt");
    if (!prompt) throw bad_request("give 'prompt' (a string) or 'messages'", "prompt");
    ids = require_tokenizer(model, "prompt").encode(*prompt, read_bool(body, "add_special_tokens").value_or(true));
  }
  Json j;
  j["count"] = ids.size();
  j["max_model_len"] = model.service->max_model_len();
  j["tokens"] = ids;
  if (read_bool(body, "return_token_strs").value_or(false)) {
    j["token_strs"] = Json::array();
    for (int32_t id : ids) j["token_strs"].push_back(token_text(model, id));
  }
  return {.body = dump_json(j)};
}

HttpReply detokenize(const ServedModel& model, const Json& body) {
  const std::optional<std::string> name = read_string(body, "model");
  check_model_name(model, name ? &*name : nullptr);
  const Json* tokens = find_field(body, "tokens");
  if (tokens == nullptr) throw bad_request("'tokens' (an array of token ids) is required", "tokens");
  const std::vector<int32_t> ids = read_token_ids(*tokens, "tokens", model.tokenizer->vocab_size());
  Json j;
  j["prompt"] = model.tokenizer->decode(ids, /*skip_special_tokens=*/false);
  return {.body = dump_json(j)};
}

}  // namespace strata::server
