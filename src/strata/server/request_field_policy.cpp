#include "strata/server/request_field_policy.h"

#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "strata/server/api_error.h"

namespace strata::server {
namespace {

using Accepts = bool (*)(const Json&);

struct FieldRule {
  std::string_view name;
  Accepts accepts = nullptr;  // null: implemented (its reader checks the value)
  std::string_view refusal;   // what a value accepts() turns down gets, with what to do
};

bool never(const Json&) { return false; }
bool is_string(const Json& v) { return v.is_string(); }
bool is_object(const Json& v) { return v.is_object(); }
bool is_false(const Json& v) { return v.is_boolean() && !v.get<bool>(); }
bool is_standard_tier(const Json& v) { return v == "auto" || v == "default"; }
bool is_text_only(const Json& v) { return v.is_array() && v.size() == 1 && v[0] == "text"; }
bool is_disabled(const Json& v) { return v == "disabled"; }
bool is_empty_array(const Json& v) { return v.is_array() && v.empty(); }

// Both routes: what generation_fields and the stream options read, vLLM's sampling
// extensions included, and `user`, an end-user id that changes no output.
constexpr FieldRule kShared[] = {
    {"model"}, {"max_tokens"}, {"temperature"}, {"top_p"}, {"n"}, {"seed"}, {"stop"}, {"stream"},
    {"stream_options"}, {"presence_penalty"}, {"frequency_penalty"}, {"logit_bias"}, {"logprobs"},
    {"top_k"}, {"min_p"}, {"repetition_penalty"}, {"stop_token_ids"}, {"ignore_eos"}, {"skip_special_tokens"},
    {"priority"}, {"prompt_logprobs"}, {"user", is_string, "must be a string"},
    // Structured output (structured_outputs.cpp); the backend name changes no output.
    {"structured_outputs"}, {"guided_json"}, {"guided_regex"}, {"guided_choice"}, {"guided_grammar"}, {"grammar"},
    {"guided_decoding_backend", is_string, "must be a string"},
};

constexpr FieldRule kChat[] = {
    {"messages"}, {"max_completion_tokens"}, {"top_logprobs"}, {"tools"}, {"tool_choice"}, {"parallel_tool_calls"},
    {"response_format"}, {"chat_template_kwargs"}, {"add_generation_prompt"}, {"reasoning_effort"},
    {"include_reasoning"}, {"chat_template"}, {"continue_final_message"},
    // Hints that change no output: identifiers, tags, cache keys (the prefix cache is automatic).
    {"safety_identifier", is_string, "must be a string"},
    {"metadata", is_object, "must be an object of string keys and values"},
    {"prompt_cache_key", is_string, "must be a string"},
    {"prompt_cache_retention", is_string, "must be a string"},
    {"prompt_cache_options", is_object, "must be an object"},
    {"store", is_false, "this server does not store completions; leave 'store' out or set it to false"},
    {"service_tier", is_standard_tier, "only the \"auto\" and \"default\" service tiers are served"},
    {"modalities", is_text_only, "this server writes text only; leave 'modalities' out or send [\"text\"]"},
    // Refused: each would change the answer and is not implemented.
    {"audio", never, "audio output is not supported; this server writes text only"},
    {"functions", never, "the deprecated functions API is not supported; send 'tools' and 'tool_choice'"},
    {"function_call", never, "the deprecated functions API is not supported; send 'tools' and 'tool_choice'"},
    {"moderation", never, "moderation is not run by this server; leave it out"},
    {"prediction", never, "predicted outputs are not supported; leave it out"},
    {"verbosity", never, "verbosity is not supported; leave it out"},
    {"web_search_options", never, "web search is not supported; leave it out"},
    {"echo", never, "echo on chat (a vLLM extension) is not supported; use /v1/completions with echo"},
    {"return_token_ids", never, "token ids in the reply are supported on /v1/completions only"},
};

constexpr FieldRule kCompletion[] = {
    {"prompt"}, {"echo"}, {"suffix"}, {"best_of"}, {"return_token_ids"},
    {"response_format", never, "structured output is supported on /v1/chat/completions only"},
};

// Anthropic's Messages API: what anthropic_request maps, and hints. cache_control marks
// prompt-cache breakpoints; the prefix cache needs none, so it changes nothing.
constexpr FieldRule kMessages[] = {
    {"model"}, {"max_tokens"}, {"messages"}, {"system"}, {"stop_sequences"}, {"temperature"}, {"top_p"},
    {"top_k"}, {"stream"}, {"tools"}, {"tool_choice"}, {"thinking"}, {"output_config"}, {"chat_template_kwargs"},
    {"metadata", is_object, "must be an object, e.g. {\"user_id\": \"...\"}"},
    {"cache_control", is_object, "must be an object, e.g. {\"type\": \"ephemeral\"}"},
    {"service_tier", is_string, "must be a string"},
    {"container", never, "containers (code execution) are not supported; leave 'container' out"},
    {"mcp_servers", never, "MCP servers are not supported; leave 'mcp_servers' out"},
    {"context_management", never, "context management is not supported; leave 'context_management' out"},
};

constexpr FieldRule kCountTokens[] = {
    {"model"}, {"messages"}, {"system"}, {"tools"}, {"tool_choice"}, {"thinking"}, {"output_config"},
    {"chat_template_kwargs"}, {"cache_control", is_object, "must be an object, e.g. {\"type\": \"ephemeral\"}"},
};

// OpenAI's Responses API: what responses_request maps, and hints.
constexpr FieldRule kResponses[] = {
    {"model"}, {"input"}, {"instructions"}, {"max_output_tokens"}, {"temperature"}, {"top_p"}, {"tools"},
    {"tool_choice"}, {"parallel_tool_calls"}, {"stream"}, {"previous_response_id"}, {"store"}, {"text"},
    {"reasoning"},
    {"metadata", is_object, "must be an object of string keys and values"},
    {"user", is_string, "must be a string"},
    {"safety_identifier", is_string, "must be a string"},
    {"prompt_cache_key", is_string, "must be a string"},
    {"prompt_cache_retention", is_string, "must be a string"},
    {"service_tier", is_standard_tier, "only the \"auto\" and \"default\" service tiers are served"},
    {"stream_options", is_object, "must be an object"},
    {"truncation", is_disabled, "only \"disabled\" is supported: a prompt over the context is refused, never cut"},
    {"background", is_false, "background responses are not supported; leave 'background' out"},
    {"include", is_empty_array, "no extra output can be included; leave 'include' out"},
    {"conversation", never, "conversations are not stored; continue with 'previous_response_id'"},
    {"prompt", never, "stored prompt templates are not supported; send 'input' and 'instructions'"},
    {"max_tool_calls", never, "'max_tool_calls' is not supported; leave it out"},
    {"top_logprobs", never, "log-probabilities are not supported on /v1/responses; use /v1/chat/completions"},
};

// Pooling models' routes (OpenAI's embeddings; vLLM's score, rerank and classify).
constexpr FieldRule kEmbeddings[] = {
    {"model"}, {"input"}, {"encoding_format"}, {"dimensions"}, {"add_special_tokens"},
    {"user", is_string, "must be a string"},
    {"truncate_prompt_tokens"},
};
constexpr FieldRule kScore[] = {
    {"model"}, {"text_1"}, {"text_2"}, {"add_special_tokens"}, {"user", is_string, "must be a string"},
    {"truncate_prompt_tokens"},
};
constexpr FieldRule kRerank[] = {
    {"model"}, {"query"}, {"documents"}, {"top_n"}, {"return_documents"}, {"user", is_string, "must be a string"},
    {"truncate_prompt_tokens"},
};
constexpr FieldRule kClassify[] = {
    {"model"}, {"input"}, {"add_special_tokens"}, {"user", is_string, "must be a string"},
    {"truncate_prompt_tokens"},
};

// vLLM's request extensions that Strata does not implement: refused by name even with
// --ignore-unknown-fields, since each would change the answer.
constexpr std::string_view kVllmUnsupported[] = {
    "min_tokens", "include_stop_str_in_output", "use_beam_search", "length_penalty",
    "allowed_token_ids", "bad_words", "truncate_prompt_tokens", "spaces_between_special_tokens",
    "guided_whitespace_pattern", "logits_processors", "return_tokens_as_token_ids",
    "cache_salt", "request_id", "kv_transfer_params", "vllm_xargs", "mm_processor_kwargs", "add_special_tokens",
    "prompt_embeds", "documents", "media_io_kwargs", "thinking_token_budget",
};

template <size_t N>
const FieldRule* find_in(const FieldRule (&rules)[N], std::string_view name) {
  for (const FieldRule& rule : rules)
    if (rule.name == name) return &rule;
  return nullptr;
}

const FieldRule* find_rule(std::string_view name, ApiRoute route) {
  switch (route) {
    case ApiRoute::kMessages: return find_in(kMessages, name);
    case ApiRoute::kCountTokens: return find_in(kCountTokens, name);
    case ApiRoute::kResponses: return find_in(kResponses, name);
    case ApiRoute::kEmbeddings: return find_in(kEmbeddings, name);
    case ApiRoute::kScore: return find_in(kScore, name);
    case ApiRoute::kRerank: return find_in(kRerank, name);
    case ApiRoute::kClassify: return find_in(kClassify, name);
    default: break;
  }
  if (const FieldRule* rule = find_in(kShared, name)) return rule;
  return route == ApiRoute::kChatCompletions ? find_in(kChat, name) : find_in(kCompletion, name);
}

const char* route_path(ApiRoute route) {
  switch (route) {
    case ApiRoute::kChatCompletions: return "/v1/chat/completions";
    case ApiRoute::kCompletions: return "/v1/completions";
    case ApiRoute::kMessages: return "/v1/messages";
    case ApiRoute::kCountTokens: return "/v1/messages/count_tokens";
    case ApiRoute::kResponses: return "/v1/responses";
    case ApiRoute::kEmbeddings: return "/v1/embeddings";
    case ApiRoute::kScore: return "/v1/score";
    case ApiRoute::kRerank: return "/v1/rerank";
    case ApiRoute::kClassify: return "/v1/classify";
  }
  return "";
}

bool is_openai_completion(ApiRoute route) {
  return route == ApiRoute::kChatCompletions || route == ApiRoute::kCompletions;
}

bool is_vllm_unsupported(std::string_view name) {
  for (std::string_view n : kVllmUnsupported)
    if (n == name) return true;
  return false;
}

// A client's field name as an error's param: short, whatever was sent.
std::string param_name(const std::string& name) { return name.substr(0, 64); }

}  // namespace

void RequestFieldPolicy::check(const Json& body, ApiRoute route) const {
  const char* route_name = route_path(route);
  for (const auto& [name, value] : body.items()) {
    if (value.is_null()) continue;
    const FieldRule* rule = find_rule(name, route);
    if (rule != nullptr) {
      if (rule->accepts != nullptr && !rule->accepts(value))
        throw bad_request(fmt::format("'{}': {}", name, rule->refusal), name);
      continue;
    }
    if (is_openai_completion(route) && is_vllm_unsupported(name))
      throw bad_request(fmt::format("'{}' (a vLLM extension) is not supported by this server; leave it out", name),
                        name);
    if (ignore_unknown_) {
      log_ignored(name);
      continue;
    }
    throw bad_request(fmt::format("{} is not a field of {} requests; remove it (or start the server with "
                                  "--ignore-unknown-fields to ignore fields it does not know)",
                                  describe(Json(name)), route_name),
                      param_name(name));
  }
}

void RequestFieldPolicy::log_ignored(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (logged_.size() >= kMaxLoggedNames || !logged_.insert(name).second) return;
  spdlog::warn("ignoring the unknown request field {} (--ignore-unknown-fields){}", describe(Json(name)),
               logged_.size() == kMaxLoggedNames ? "; no further field names will be logged" : "");
}

}  // namespace strata::server
