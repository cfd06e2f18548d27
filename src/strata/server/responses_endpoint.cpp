#include "strata/server/responses_endpoint.h"

#include "strata/server/api_error.h"
#include "strata/server/chat_run.h"
#include "strata/server/choice_output.h"
#include "strata/server/openai_objects.h"
#include "strata/server/random_id.h"
#include "strata/server/responses_objects.h"
#include "strata/server/responses_request.h"

namespace strata::server {
namespace {

// What GET /v1/responses/{id}, its input_items and a follow-up's previous_response_id read.
void store_response(ResponseStore& store, const ResponsesRequest& request, Json answer_message, const Json& response) {
  Json conversation = request.conversation;
  conversation.push_back(std::move(answer_message));
  store.put(response["id"].get<std::string>(),
            {.response = response, .input_items = request.input_items, .conversation = std::move(conversation)});
}

class ResponseEventStream final : public EventSource {
 public:
  ResponseEventStream(ResponsesRequest request, std::unique_ptr<GenerationRun> run, ResponseEnvelope env,
                      std::shared_ptr<ResponseStore> store)
      : request_(std::move(request)), run_(std::move(run)), env_(std::move(env)), store_(std::move(store)),
        output_(request_.chat) {}

  bool next(std::string& out) override {
    if (!started_) {
      started_ = true;
      emit("response.created", {{"response", response_json(env_, state_)}}, out);
      emit("response.in_progress", {{"response", response_json(env_, state_)}}, out);
      return true;
    }
    if (run_->poll(std::chrono::milliseconds(50), [&](int32_t, ChoiceDelta& d) { on_delta(d, out); })) return true;
    close_item(out);
    state_.usage = responses_usage_json(run_->usage());
    if (!run_->error().empty()) {
      state_.status = "failed";
      state_.error = {{"code", "server_error"}, {"message", "generation failed: " + run_->error()}};
      emit("response.failed", {{"response", response_json(env_, state_)}}, out);
      return false;
    }
    Json response = response_json(env_, state_);
    if (request_.store) store_response(*store_, request_, assistant_message(content_, calls_), response);
    const bool incomplete = std::string_view(state_.status) == "incomplete";
    emit(incomplete ? "response.incomplete" : "response.completed", {{"response", std::move(response)}}, out);
    return false;
  }

 private:
  enum class Item : uint8_t { kNone, kReasoning, kMessage };

  // {"type", "sequence_number", ...fields} as a named event.
  void emit(const char* type, const Json& fields, std::string& out) {
    Json e = {{"type", type}, {"sequence_number", sequence_number_++}};
    for (const auto& [key, value] : fields.items()) e[key] = value;
    out += sse_named_event(type, e);
  }
  Json at_item() const {
    return {{"item_id", item_id_}, {"output_index", state_.output.size()}, {"content_index", 0}};
  }

  void open_item(Item kind, std::string& out) {
    const bool message = kind == Item::kMessage;
    item_id_ = (message ? "msg_" : "rs_") + random_alnum(24);
    text_.clear();
    const Json item = message ? message_item(item_id_, "", "in_progress") : reasoning_item(item_id_, "", "in_progress");
    emit("response.output_item.added", {{"output_index", state_.output.size()}, {"item", item}}, out);
    if (message) {
      Json part = at_item();
      part["part"] = output_text_part("");
      emit("response.content_part.added", part, out);
    }
    open_ = kind;
  }

  void close_item(std::string& out) {
    if (open_ == Item::kNone) return;
    const char* status = std::string_view(state_.status) == "incomplete" ? "incomplete" : "completed";
    Json done = at_item();
    done["text"] = text_;
    Json item;
    if (open_ == Item::kMessage) {
      done["logprobs"] = Json::array();
      emit("response.output_text.done", done, out);
      done.erase("text");
      done.erase("logprobs");
      done["part"] = output_text_part(text_);
      emit("response.content_part.done", done, out);
      item = message_item(item_id_, text_, status);
    } else {
      emit("response.reasoning_text.done", done, out);
      item = reasoning_item(item_id_, text_, status);
    }
    emit("response.output_item.done", {{"output_index", state_.output.size()}, {"item", item}}, out);
    state_.output.push_back(std::move(item));
    open_ = Item::kNone;
  }

  void send(Item kind, std::string_view text, std::string& out) {
    if (text.empty()) return;
    if (open_ != kind) {
      close_item(out);
      open_item(kind, out);
    }
    text_ += text;
    if (kind == Item::kMessage) content_ += text;
    Json delta = at_item();
    delta["delta"] = text;
    if (kind == Item::kMessage) delta["logprobs"] = Json::array();
    emit(kind == Item::kMessage ? "response.output_text.delta" : "response.reasoning_text.delta", delta, out);
  }

  // A call's item is added with its name, takes its arguments piece by piece, and is done
  // when the call is whole; its place in the output is kept from the start.
  void send_call_delta(const ToolCallDelta& d, std::string& out) {
    if (!d.id.empty()) {
      close_item(out);
      calls_.push_back({.id = d.id, .name = d.name});
      call_items_.push_back({.id = "fc_" + random_alnum(24), .output_index = state_.output.size()});
      Json item = function_call_item(call_items_.back().id, calls_.back(), "in_progress");
      emit("response.output_item.added", {{"output_index", call_items_.back().output_index}, {"item", item}}, out);
      state_.output.push_back(std::move(item));
    }
    const CallItem& at = call_items_.at(static_cast<size_t>(d.call));
    ToolCall& call = calls_.at(static_cast<size_t>(d.call));
    if (!d.arguments.empty()) {
      call.arguments += d.arguments;
      emit("response.function_call_arguments.delta",
           {{"item_id", at.id}, {"output_index", at.output_index}, {"delta", d.arguments}}, out);
    }
    if (!d.closes) return;
    emit("response.function_call_arguments.done",
         {{"item_id", at.id}, {"output_index", at.output_index}, {"name", call.name}, {"arguments", call.arguments}}, out);
    Json item = function_call_item(at.id, call, "completed");
    emit("response.output_item.done", {{"output_index", at.output_index}, {"item", item}}, out);
    state_.output[at.output_index] = std::move(item);
  }

  // Thinking and text into their items, and the calls' deltas in the order they were written.
  void send_answer(const ChatAnswer& answer, std::string& out) {
    send(Item::kReasoning, answer.reasoning, out);
    in_written_order(
        answer, [&](std::string_view text) { send(Item::kMessage, text, out); },
        [&](const ToolCallDelta& d) { send_call_delta(d, out); });
  }

  void on_delta(ChoiceDelta& d, std::string& out) {
    send_answer(output_.push(d.text), out);
    if (d.finish_reason == FinishReason::kNone) return;
    if (d.finish_reason == FinishReason::kLength) state_.status = "incomplete";
    else if (d.finish_reason == FinishReason::kStop) state_.status = "completed";
    send_answer(output_.finish(), out);
    if (content_.empty() && calls_.empty()) {  // an answer always has a message
      close_item(out);
      open_item(Item::kMessage, out);
    }
    close_item(out);
  }

  ResponsesRequest request_;
  std::unique_ptr<GenerationRun> run_;
  ResponseEnvelope env_;
  std::shared_ptr<ResponseStore> store_;
  ChatOutputStream output_;
  ResponseState state_;
  bool started_ = false;
  int64_t sequence_number_ = 0;
  Item open_ = Item::kNone;
  std::string item_id_;
  std::string text_;     // of the open item
  std::string content_;  // all the answer's text, for the store
  struct CallItem {
    std::string id;
    size_t output_index = 0;
  };
  std::vector<ToolCall> calls_;       // by index: as streamed so far
  std::vector<CallItem> call_items_;  // by index
};

}  // namespace

HttpReply create_response(const ServedModel& model, ReasoningFormat reasoning, const Json& body,
                          const std::shared_ptr<ResponseStore>& store, const ClientWatch& client) {
  const std::optional<std::string> name = read_string(body, "model");
  ResponsesRequest request = read_responses_request(body, model.vocab_size, *store);
  StartedChat started = start_chat(model, request.chat,
                                   {.model_name = name ? &*name : nullptr, .reasoning = reasoning, .prompt_field = "input"});
  ResponseEnvelope env{.id = "resp_" + random_alnum(32), .created_at = unix_now(), .model = started.model,
                       .request_fields = response_request_fields(body, request.store)};
  if (request.chat.stream)
    return {.events = std::make_shared<ResponseEventStream>(std::move(request), std::move(started.run), std::move(env),
                                                            store)};
  const std::vector<ChoiceOutput> choices = collect_choices(*started.run, client);
  const ChatAnswer answer = parse_chat_answer(request.chat, choices.at(0).text);
  const bool incomplete = choices[0].finish_reason == FinishReason::kLength;
  const ResponseState state{.status = incomplete ? "incomplete" : "completed",
                            .output = output_items(answer, incomplete),
                            .usage = responses_usage_json(started.run->usage())};
  Json response = response_json(env, state);
  if (request.store) store_response(*store, request, assistant_message(answer.content, answer.tool_calls), response);
  return {.body = dump_json(response)};
}

}  // namespace strata::server
