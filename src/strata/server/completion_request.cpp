#include "strata/server/completion_request.h"

#include <algorithm>

#include <fmt/format.h>

#include "strata/server/api_error.h"
#include "strata/server/structured_outputs.h"

namespace strata::server {
namespace {

constexpr size_t kMaxPrompts = 256;
// Choices of one request (prompts x n): each is a sequence the engine runs, so one small body
// cannot queue tens of thousands of them.

bool is_id_array(const Json& v) {
  if (!v.is_array() || v.empty()) return false;
  for (const Json& t : v)
    if (!t.is_number_integer()) return false;
  return true;
}

}  // namespace

std::vector<PromptInput> read_prompts(const Json& prompt, int64_t vocab_size) {
  std::vector<PromptInput> out;
  if (prompt.is_string()) {
    out.emplace_back(prompt.get<std::string>());
  } else if (is_id_array(prompt)) {
    out.emplace_back(read_token_ids(prompt, "prompt", vocab_size));
  } else if (prompt.is_array() && !prompt.empty() && prompt.size() <= kMaxPrompts) {
    for (size_t i = 0; i < prompt.size(); ++i) {
      const Json& p = prompt[i];
      if (p.is_string()) out.emplace_back(p.get<std::string>());
      else if (p.is_array()) out.emplace_back(read_token_ids(p, fmt::format("prompt[{}]", i), vocab_size));
      else throw bad_request(fmt::format("prompt[{}] must be a string or an array of token ids", i), "prompt");
    }
  } else {
    throw bad_request(fmt::format("'prompt' must be a string, an array of at most {} strings, an array of token "
                                  "ids, or an array of token-id arrays",
                                  kMaxPrompts),
                      "prompt");
  }
  return out;
}

CompletionRequest read_completion_request(const Json& body, int64_t vocab_size) {
  CompletionRequest c;
  const Json* prompt = find_field(body, "prompt");
  if (prompt == nullptr) throw bad_request("'prompt' is required", "prompt");
  if (const Json* suffix = find_field(body, "suffix"); suffix != nullptr && !(suffix->is_string() && suffix->empty()))
    throw bad_request("'suffix' (fill-in-the-middle) is not supported by this server; leave it out", "suffix");
  c.prompts = read_prompts(*prompt, vocab_size);
  c.fields = read_generation_fields(body, vocab_size);
  StructuredOutput structured = read_structured_outputs(body);
  c.fields.request.json_object = structured.json_object;
  c.fields.request.json_schema = std::move(structured.json_schema);
  c.fields.request.grammar = std::move(structured.grammar);
  if (const std::optional<int64_t> best_of = read_int(body, "best_of", 1, kMaxChoices);
      best_of && *best_of != c.fields.request.n)
    throw bad_request(fmt::format("'best_of' {} asks for the best {} of {} choices, which this server does not "
                                  "rank; leave best_of out or set it to n",
                                  *best_of, c.fields.request.n, *best_of),
                      "best_of");
  const int64_t num_choices = static_cast<int64_t>(c.prompts.size()) * c.fields.request.n;
  if (num_choices > kMaxSequencesPerRequest)
    throw bad_request(fmt::format("{} prompts x n = {} asks for {} choices; at most {} per request: send fewer "
                                  "prompts or a smaller n, or split the request",
                                  c.prompts.size(), c.fields.request.n, num_choices, kMaxSequencesPerRequest),
                      "n");
  c.stream = read_bool(body, "stream").value_or(false);
  if (const Json* options = find_field(body, "stream_options")) {
    if (!options->is_object()) throw bad_request("'stream_options' must be an object", "stream_options");
    c.include_usage = read_bool(*options, "include_usage").value_or(false);
  }
  c.echo = read_bool(body, "echo").value_or(false);
  c.return_token_ids = read_bool(body, "return_token_ids").value_or(false);
  if (const std::optional<int64_t> logprobs = read_int(body, "logprobs", 0, 20))
    c.fields.request.sampling.logprobs = static_cast<int32_t>(*logprobs);
  GenerationRequest& r = c.fields.request;
  c.prompt_logprobs = r.prompt_logprobs;
  if (r.max_tokens == 0 && !c.echo)
    throw bad_request("'max_tokens' 0 generates nothing; it scores the prompt only with 'echo': true", "max_tokens");
  // Echo with logprobs covers the prompt's tokens too, with as many top tokens as generated ones.
  if (c.echo && r.sampling.logprobs >= 0) r.prompt_logprobs = std::max(r.prompt_logprobs, r.sampling.logprobs);
  if (c.stream && r.prompt_logprobs >= 0)
    throw bad_request("prompt logprobs ('prompt_logprobs', or 'echo' with 'logprobs') are returned without "
                      "streaming only; set 'stream' to false",
                      r.sampling.logprobs >= 0 && c.echo ? "echo" : "prompt_logprobs");
  return c;
}

}  // namespace strata::server
