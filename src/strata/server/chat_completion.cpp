#include "strata/server/chat_completion.h"

#include <algorithm>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/server/api_error.h"
#include "strata/server/chat_request.h"
#include "strata/server/choice_output.h"
#include "strata/server/logprobs_json.h"
#include "strata/server/openai_objects.h"
#include "strata/server/random_id.h"
#include "strata/server/tool_call_stream.h"
#include "strata/text/chat_prompt.h"

namespace strata::server {
namespace {

Json tool_calls_json(const std::vector<ToolCall>& calls, bool with_index) {
  Json out = Json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    Json c;
    if (with_index) c["index"] = i;
    c["id"] = calls[i].id;
    c["type"] = "function";
    c["function"]["name"] = calls[i].name;
    c["function"]["arguments"] = calls[i].arguments;
    out.push_back(std::move(c));
  }
  return out;
}

Json stop_reason_json(const std::optional<std::string>& reason) {
  return reason ? Json(*reason) : Json(nullptr);
}

// parallel_tool_calls false: only the first call (a forced choice never writes a second).
ParsedOutput limit_calls(const ChatRequest& chat, ParsedOutput parsed) {
  if (!chat.tool_choice.parallel && parsed.tool_calls.size() > 1) parsed.tool_calls.resize(1);
  return parsed;
}

// The finish reason, "tool_calls" when the choice ended normally in tool calls.
Json chat_finish_reason(FinishReason reason, bool has_tool_calls) {
  if (has_tool_calls && reason == FinishReason::kStop) return "tool_calls";
  return finish_reason_json(reason);
}

// The thinking under both of vLLM's names (reasoning_content, and its newer reasoning).
void put_reasoning(Json& message, const ChatRequest& chat, const std::string& reasoning) {
  if (chat.reasoning == ReasoningFormat::kNone) return;
  const Json value = chat.include_reasoning && !reasoning.empty() ? Json(reasoning) : Json(nullptr);
  message["reasoning_content"] = value;
  message["reasoning"] = value;
}

Json choice_json(const ServedModel& model, const ChoiceOutput& c, size_t index, const ChatRequest& chat) {
  const ReasoningDelta text = split_reasoning(chat.reasoning, chat.prompt_tail, c.text);
  ParsedOutput parsed{.content = text.content};
  if (chat.parse_tool_calls) parsed = limit_calls(chat, parse_tool_calls(text.content));
  const bool calls = !parsed.tool_calls.empty();
  const bool empty = parsed.content.empty() && (calls || !text.reasoning.empty());
  Json message;
  message["role"] = "assistant";
  message["content"] = empty ? Json(nullptr) : Json(parsed.content);
  put_reasoning(message, chat, text.reasoning);
  if (calls) message["tool_calls"] = tool_calls_json(parsed.tool_calls, false);
  Json choice;
  choice["index"] = index;
  choice["message"] = std::move(message);
  choice["logprobs"] = chat.logprobs ? chat_logprobs_json(model, c.logprobs) : Json(nullptr);
  choice["finish_reason"] = chat_finish_reason(c.finish_reason, calls);
  choice["stop_reason"] = stop_reason_json(c.stop_reason);
  return choice;
}

class ChatEventStream final : public EventSource {
 public:
  ChatEventStream(const ServedModel& model, ChatRequest chat, std::unique_ptr<GenerationRun> run, Envelope env)
      : model_(model), chat_(std::move(chat)), run_(std::move(run)), env_(std::move(env)),
        tool_streams_(static_cast<size_t>(run_->num_choices())),
        reasoning_(static_cast<size_t>(run_->num_choices()), ReasoningParser(chat_.reasoning, chat_.prompt_tail)) {}

  bool next(std::string& out) override {
    if (!started_) {
      started_ = true;
      for (int32_t i = 0; i < run_->num_choices(); ++i) out += chunk(i, {{"role", "assistant"}, {"content", ""}});
      return true;
    }
    const bool more = run_->poll(std::chrono::milliseconds(50), [&](int32_t i, ChoiceDelta& d) { on_delta(i, d, out); });
    if (more) return true;
    out += stream_end(*run_, env_, "chat.completion.chunk", chat_.include_usage);
    return false;
  }

 private:
  std::string chunk(int32_t index, Json delta, Json logprobs = nullptr, Json finish = nullptr,
                    Json stop_reason = nullptr) const {
    Json j = envelope_json(env_, "chat.completion.chunk");
    Json choice;
    choice["index"] = index;
    choice["delta"] = std::move(delta);
    choice["logprobs"] = std::move(logprobs);
    choice["finish_reason"] = std::move(finish);
    if (!choice["finish_reason"].is_null()) choice["stop_reason"] = std::move(stop_reason);
    j["choices"] = Json::array({std::move(choice)});
    if (chat_.include_usage) j["usage"] = nullptr;
    return sse_event(j);
  }

  // A text delta: the thinking (unless the client asked to leave it out) and the answer,
  // whose tool-call blocks are held back for the end. An empty one carries only logprobs.
  void send_text(int32_t i, ReasoningDelta text, Json logprobs, std::string& out) {
    if (chat_.parse_tool_calls) text.content = tool_streams_[static_cast<size_t>(i)].push(text.content);
    if (!chat_.include_reasoning) text.reasoning.clear();
    Json delta = Json::object();
    if (!text.reasoning.empty()) {
      delta["reasoning_content"] = text.reasoning;
      delta["reasoning"] = text.reasoning;
    }
    if (!text.content.empty() || (text.reasoning.empty() && !logprobs.is_null())) delta["content"] = text.content;
    if (!delta.empty()) out += chunk(i, std::move(delta), std::move(logprobs));
  }

  void on_delta(int32_t i, ChoiceDelta& d, std::string& out) {
    if (i < 0 || i >= run_->num_choices()) return;
    ReasoningParser& reasoning = reasoning_[static_cast<size_t>(i)];
    Json logprobs = chat_.logprobs && !d.logprobs.empty() ? chat_logprobs_json(model_, d.logprobs) : Json(nullptr);
    send_text(i, reasoning.push(d.text), std::move(logprobs), out);
    if (d.finish_reason == FinishReason::kNone) return;
    send_text(i, reasoning.finish(), nullptr, out);
    bool calls = false;
    if (chat_.parse_tool_calls) {
      const ParsedOutput parsed = limit_calls(chat_, tool_streams_[static_cast<size_t>(i)].finish());
      if (!parsed.content.empty()) out += chunk(i, {{"content", parsed.content}});
      calls = !parsed.tool_calls.empty();
      if (calls) out += chunk(i, {{"tool_calls", tool_calls_json(parsed.tool_calls, true)}});
    }
    out += chunk(i, Json::object(), nullptr, chat_finish_reason(d.finish_reason, calls), stop_reason_json(d.stop_reason));
  }

  const ServedModel& model_;
  ChatRequest chat_;
  std::unique_ptr<GenerationRun> run_;
  Envelope env_;
  std::vector<ToolCallStream> tool_streams_;
  std::vector<ReasoningParser> reasoning_;
  bool started_ = false;
};

// A tag a template ends the prompt with, and harmony's last message header, fit in this.
constexpr size_t kPromptTailBytes = 256;

// The rendered prompt's token ids; its end is kept in chat.prompt_tail for the reasoning parser.
std::vector<int32_t> encode_chat(const ServedModel& model, ChatRequest& chat) {
  const text::Tokenizer& tokenizer = require_tokenizer(model, "messages");
  std::vector<int32_t> ids;
  try {
    const std::string prompt = text::render_conversation(tokenizer, chat.render);
    ids = tokenizer.encode(prompt, /*add_special_tokens=*/false);
    chat.prompt_tail = prompt.substr(prompt.size() - std::min(prompt.size(), kPromptTailBytes));
  } catch (const Error& e) {
    throw bad_request(fmt::format("the chat template could not render these messages: {}", e.what()), "messages");
  }
  for (int32_t id : ids)
    if (id < 0 || id >= model.vocab_size)
      throw bad_request(fmt::format("the rendered prompt holds token id {}, outside the model's vocabulary of {} "
                                    "(the tokenizer does not match the model)",
                                    id, model.vocab_size),
                        "messages");
  return ids;
}

}  // namespace

HttpReply chat_completion(const ServedModel& model, ReasoningFormat reasoning, const Json& body,
                          const ClientWatch& client) {
  const std::optional<std::string> name = read_string(body, "model");
  const int32_t lora_slot = check_model_name(model, name ? &*name : nullptr);
  ChatRequest chat = read_chat_request(body, model.vocab_size);
  const bool constrained = chat.json_object || chat.json_schema || chat.tool_choice.forced;
  chat.reasoning = constrained ? ReasoningFormat::kNone : reasoning;
  // Harmony's markup is special tokens: the parser needs them in the text, and drops them.
  if (chat.reasoning == ReasoningFormat::kHarmony) chat.fields.request.skip_special_tokens = false;
  GenerationRequest request = fit_to_context(chat.fields, encode_chat(model, chat),
                                             {.max_model_len = model.service->max_model_len(), .prompt_field = "messages"});
  const std::string answered_by = apply_lora_choice(model, lora_slot, request);
  request.json_object = chat.json_object;
  request.json_schema = chat.json_schema;
  request.tool_calls = chat.tool_choice.forced;
  std::vector<GenerationRequest> requests;
  requests.push_back(std::move(request));
  auto run = std::make_unique<GenerationRun>(*model.service, std::move(requests));
  Envelope env{.id = "chatcmpl-" + random_alnum(24), .created = unix_now(), .model = answered_by};
  if (chat.stream) return {.events = std::make_shared<ChatEventStream>(model, std::move(chat), std::move(run), env)};
  const std::vector<ChoiceOutput> choices = collect_choices(*run, client);
  Json j = envelope_json(env, "chat.completion");
  j["choices"] = Json::array();
  for (size_t i = 0; i < choices.size(); ++i) j["choices"].push_back(choice_json(model, choices[i], i, chat));
  j["usage"] = usage_json(run->usage());
  return {.body = dump_json(j)};
}

}  // namespace strata::server
