#include "strata/server/chat_completion.h"

#include "strata/server/chat_output.h"
#include "strata/server/chat_run.h"
#include "strata/server/choice_output.h"
#include "strata/server/logprobs_json.h"
#include "strata/server/openai_objects.h"
#include "strata/server/prompt_logprobs_json.h"
#include "strata/server/random_id.h"

namespace strata::server {
namespace {

Json tool_calls_json(const std::vector<ToolCall>& calls) {
  Json out = Json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    Json c;
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
  const ChatAnswer answer = parse_chat_answer(chat, c.text);
  const bool calls = !answer.tool_calls.empty();
  const bool empty = answer.content.empty() && (calls || !answer.reasoning.empty());
  Json message;
  message["role"] = "assistant";
  message["content"] = empty ? Json(nullptr) : Json(answer.content);
  put_reasoning(message, chat, answer.reasoning);
  if (calls) message["tool_calls"] = tool_calls_json(answer.tool_calls);
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
        outputs_(static_cast<size_t>(run_->num_choices()), ChatOutputStream(chat_)),
        num_calls_(static_cast<size_t>(run_->num_choices()), 0) {}

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

  // A text delta: the thinking and the answer. An empty one carries only logprobs.
  void send_text(int32_t i, const ReasoningDelta& text, Json logprobs, std::string& out) {
    Json delta = Json::object();
    if (!text.reasoning.empty()) {
      delta["reasoning_content"] = text.reasoning;
      delta["reasoning"] = text.reasoning;
    }
    if (!text.content.empty() || (text.reasoning.empty() && !logprobs.is_null())) delta["content"] = text.content;
    if (!delta.empty()) out += chunk(i, std::move(delta), std::move(logprobs));
  }

  // As vLLM streams calls: the id and name (arguments ""), then pieces of the arguments.
  void send_call_delta(int32_t i, const ToolCallDelta& d, std::string& out) {
    if (!d.id.empty()) {
      ++num_calls_[static_cast<size_t>(i)];
      Json head = {{"index", d.call}, {"id", d.id}, {"type", "function"}};
      head["function"] = {{"name", d.name}, {"arguments", ""}};
      out += chunk(i, {{"tool_calls", Json::array({std::move(head)})}});
    } else if (!d.arguments.empty()) {
      Json arguments = {{"index", d.call}, {"function", {{"arguments", d.arguments}}}};
      out += chunk(i, {{"tool_calls", Json::array({std::move(arguments)})}});
    }
  }

  // The thinking, then the content and the call deltas in the order they were written.
  void send_answer(int32_t i, const ChatAnswer& answer, Json logprobs, std::string& out) {
    ReasoningDelta text{.reasoning = answer.reasoning};
    in_written_order(
        answer,
        [&](std::string_view content) {
          text.content = content;
          send_text(i, text, std::move(logprobs), out);
          text.reasoning.clear();
          logprobs = nullptr;
        },
        [&](const ToolCallDelta& d) { send_call_delta(i, d, out); });
  }

  void on_delta(int32_t i, ChoiceDelta& d, std::string& out) {
    if (i < 0 || i >= run_->num_choices()) return;
    ChatOutputStream& output = outputs_[static_cast<size_t>(i)];
    Json logprobs = chat_.logprobs && !d.logprobs.empty() ? chat_logprobs_json(model_, d.logprobs) : Json(nullptr);
    send_answer(i, output.push(d.text), std::move(logprobs), out);
    if (d.finish_reason == FinishReason::kNone) return;
    send_answer(i, output.finish(), nullptr, out);
    const bool calls = num_calls_[static_cast<size_t>(i)] > 0;
    out += chunk(i, Json::object(), nullptr, chat_finish_reason(d.finish_reason, calls), stop_reason_json(d.stop_reason));
  }

  const ServedModel& model_;
  ChatRequest chat_;
  std::unique_ptr<GenerationRun> run_;
  Envelope env_;
  std::vector<ChatOutputStream> outputs_;
  std::vector<int32_t> num_calls_;  // per choice: the calls sent so far
  bool started_ = false;
};

}  // namespace

HttpReply chat_completion(const ServedModel& model, ReasoningFormat reasoning, const Json& body,
                          const ClientWatch& client) {
  const std::optional<std::string> name = read_string(body, "model");
  ChatRequest chat = read_chat_request(body, model.vocab_size);
  StartedChat started = start_chat(model, chat, {.model_name = name ? &*name : nullptr, .reasoning = reasoning});
  auto run = std::move(started.run);
  Envelope env{.id = "chatcmpl-" + random_alnum(24), .created = unix_now(), .model = started.model};
  if (chat.stream) return {.events = std::make_shared<ChatEventStream>(model, std::move(chat), std::move(run), env)};
  const std::vector<ChoiceOutput> choices = collect_choices(*run, client);
  Json j = envelope_json(env, "chat.completion");
  j["choices"] = Json::array();
  for (size_t i = 0; i < choices.size(); ++i) j["choices"].push_back(choice_json(model, choices[i], i, chat));
  if (chat.fields.request.prompt_logprobs >= 0)
    j["prompt_logprobs"] = vllm_prompt_logprobs_json(model, run->prompt_logprobs(0), chat.fields.request.prompt_logprobs);
  j["usage"] = usage_json(run->usage());
  return {.body = dump_json(j)};
}

}  // namespace strata::server
