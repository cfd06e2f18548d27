// Renders a Hugging Face chat template the way transformers' apply_chat_template does:
// variables messages, tools (none when absent), documents (none), add_generation_prompt,
// bos_token, eos_token, the extra variables, and the globals raise_exception, strftime_now.
// JSON is ordered_json: tojson and dict iteration keep the caller's key order, as in Python.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace strata {

struct ChatRenderRequest {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;  // null: no tools given
  bool add_generation_prompt = false;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // e.g. {"enable_thinking": false}
  std::string bos_token, eos_token;
};

// Throws strata::Error (with the template line) for a broken template or raise_exception().
std::string render_chat(const std::string& chat_template, const ChatRenderRequest& request);

}  // namespace strata
