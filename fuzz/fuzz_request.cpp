// Request-parser fuzz target. Input: one control byte (which reader; whether to render), then
// a request body as a client sends it. The body goes through what the server does before the
// engine: parse_body, the route's field policy, read_chat_request / read_completion_request /
// read_conversation (or, with bit 16, the Anthropic messages / responses readers that map onto
// read_chat_request), the chat template over the messages, and a compiled response_format
// schema's (or forced tool call's) recogniser fed the body's own bytes. Only ApiError (a 4xx) and strata::Error may come out; what a read
// accepts must be in the ranges the engine relies on.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "strata/core/error.h"
#include "strata/server/anthropic_request.h"
#include "strata/server/api_error.h"
#include "strata/server/chat_request.h"
#include "strata/server/completion_request.h"
#include "strata/server/json_fields.h"
#include "strata/server/request_field_policy.h"
#include "strata/server/responses_request.h"
#include "strata/text/chat_template.h"

namespace {

using namespace strata::server;

constexpr int64_t kVocabSize = 1000;

// ChatML with tools, tool calls and a template variable: the paths real templates take over
// client data (iteration, tojson, attribute access on arbitrary values).
constexpr const char* kTemplate = R"({%- if tools %}<|im_start|>system
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}<|im_end|>
{% endif %}{%- for m in messages %}<|im_start|>{{ m.role }}
{{ m.content }}{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>{{ c.function.name }} {{ c.function.arguments | tojson }}</tool_call>{% endfor %}{% endif %}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% if enable_thinking is defined and not enable_thinking %}<think></think>{% endif %}{% endif %})";

void check_fields(const GenerationFields& f) {
  const strata::GenerationRequest& r = f.request;
  FUZZ_CHECK(r.n >= 1 && r.n <= 128, "n out of range");
  FUZZ_CHECK(r.max_tokens >= 1, "max_tokens below 1");
  FUZZ_CHECK(r.sampling.temperature >= 0 && r.sampling.temperature <= 100, "temperature out of range");
  FUZZ_CHECK(r.sampling.top_p > 0 && r.sampling.top_p <= 1, "top_p out of range");
  FUZZ_CHECK(r.sampling.repetition_penalty > 0, "repetition_penalty not positive");
  for (int32_t id : r.stop_token_ids) FUZZ_CHECK(id >= 0 && id < kVocabSize, "stop token id outside the vocabulary");
  for (const std::string& s : r.stop) FUZZ_CHECK(!s.empty(), "an empty stop string");
  for (const strata::LogitBias& b : r.sampling.logit_bias)
    FUZZ_CHECK(b.token_id >= 0 && b.token_id < kVocabSize && b.bias >= -100 && b.bias <= 100, "logit_bias out of range");
  FUZZ_CHECK(!r.sampling.validate(), "accepted sampling parameters the engine refuses");
}

void render(const strata::ChatRenderRequest& conversation) {
  strata::ChatRenderRequest request = conversation;
  request.bos_token = "<s>";
  request.eos_token = "</s>";
  try {
    strata::render_chat(kTemplate, request);
  } catch (const strata::Error&) {
  }
}

// A recogniser over arbitrary bytes: never out of bounds, done only at a value's end.
template <typename Grammar, typename Spec>
void run_grammar(const Spec& spec, const std::string& bytes) {
  Grammar grammar(&spec);
  for (const char c : bytes) grammar.feed(static_cast<unsigned char>(c));
}

// The routes mapped onto the chat path: their readers build a chat body for read_chat_request.
void read_mapped(uint8_t control, const Json& body, const RequestFieldPolicy& policy, const std::string& text) {
  static const ResponseStore store;
  ChatRequest chat;
  if (control & 32) {
    policy.check(body, ApiRoute::kMessages);
    chat = read_messages_request(body, kVocabSize, control & 1).chat;
  } else {
    policy.check(body, ApiRoute::kResponses);
    chat = read_responses_request(body, kVocabSize, store).chat;
  }
  check_fields(chat.fields);
  if (chat.json_schema) run_grammar<strata::JsonSchemaGrammar>(*chat.json_schema, text);
  if (chat.tool_choice.forced) run_grammar<strata::ToolCallGrammar>(*chat.tool_choice.forced, text);
  if (control & 4) render(chat.render);
}

void read(uint8_t control, const std::string& text) {
  const Json body = parse_body(text);
  static const RequestFieldPolicy strict(false), lenient(true);
  const RequestFieldPolicy& policy = control & 8 ? lenient : strict;
  if (control & 16) return read_mapped(control, body, policy, text);
  switch (control % 3) {
    case 0: {
      policy.check(body, ApiRoute::kChatCompletions);
      const ChatRequest chat = read_chat_request(body, kVocabSize);
      check_fields(chat.fields);
      if (chat.json_schema) run_grammar<strata::JsonSchemaGrammar>(*chat.json_schema, text);
      if (chat.grammar) run_grammar<strata::GrammarState>(*chat.grammar, text);
      if (chat.tool_choice.forced) run_grammar<strata::ToolCallGrammar>(*chat.tool_choice.forced, text);
      if (control & 4) render(chat.render);
      break;
    }
    case 1: {
      policy.check(body, ApiRoute::kCompletions);
      const CompletionRequest c = read_completion_request(body, kVocabSize);
      check_fields(c.fields);
      FUZZ_CHECK(!c.prompts.empty(), "no prompt accepted");
      for (const PromptInput& p : c.prompts)
        if (const auto* ids = std::get_if<std::vector<int32_t>>(&p))
          for (int32_t id : *ids) FUZZ_CHECK(id >= 0 && id < kVocabSize, "prompt id outside the vocabulary");
      break;
    }
    default: render(read_conversation(body)); break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    read(data[0], text);
  } catch (const ApiError& e) {
    FUZZ_CHECK(e.status >= 400 && e.status < 500, "a refusal that is not a 4xx");
  } catch (const strata::Error&) {
  }
  return 0;
}
