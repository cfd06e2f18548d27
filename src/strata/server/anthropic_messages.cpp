#include "strata/server/anthropic_messages.h"

#include <algorithm>

#include "strata/server/anthropic_request.h"
#include "strata/server/api_error.h"
#include "strata/server/chat_output.h"
#include "strata/server/chat_run.h"
#include "strata/server/choice_output.h"
#include "strata/server/json_parse.h"
#include "strata/server/openai_objects.h"
#include "strata/server/random_id.h"

namespace strata::server {
namespace {

struct StopInfo {
  Json stop_reason;    // end_turn, max_tokens, stop_sequence, tool_use; null for a cancelled one
  Json stop_sequence;  // the stop sequence that ended it, or null
};

StopInfo stop_info(FinishReason reason, const std::optional<std::string>& stop, bool tool_calls,
                   const std::vector<std::string>& stop_sequences) {
  if (reason == FinishReason::kLength) return {"max_tokens", nullptr};
  if (reason != FinishReason::kStop) return {nullptr, nullptr};
  if (tool_calls) return {"tool_use", nullptr};
  if (stop && std::find(stop_sequences.begin(), stop_sequences.end(), *stop) != stop_sequences.end())
    return {"stop_sequence", *stop};
  return {"end_turn", nullptr};
}

// Anthropic counts cached prompt tokens apart: input_tokens is the rest of the prompt.
Json anthropic_usage_json(const Usage& usage) {
  Json j;
  j["input_tokens"] = usage.prompt_tokens - usage.cached_tokens;
  j["cache_creation_input_tokens"] = 0;
  j["cache_read_input_tokens"] = usage.cached_tokens;
  j["output_tokens"] = usage.completion_tokens;
  return j;
}

// The call's arguments as the object they are (constrained or parsed output: always an object).
Json tool_input(const ToolCall& call) {
  ParsedJson parsed = parse_json(call.arguments, kMaxJsonNesting);
  return parsed.value && parsed.value->is_object() ? std::move(*parsed.value) : Json::object();
}

Json tool_use_block(const ToolCall& call, Json input) {
  return {{"type", "tool_use"}, {"id", "toolu_" + random_alnum(24)}, {"name", call.name}, {"input", std::move(input)}};
}

Json message_json(const std::string& id, const std::string& model, Json content) {
  Json j;
  j["id"] = id;
  j["type"] = "message";
  j["role"] = "assistant";
  j["model"] = model;
  j["content"] = std::move(content);
  j["stop_reason"] = nullptr;
  j["stop_sequence"] = nullptr;
  return j;
}

Json content_json(const ChatAnswer& answer) {
  Json content = Json::array();
  if (!answer.reasoning.empty())
    content.push_back({{"type", "thinking"}, {"thinking", answer.reasoning}, {"signature", ""}});
  if (!answer.content.empty()) content.push_back({{"type", "text"}, {"text", answer.content}});
  for (const ToolCall& call : answer.tool_calls) content.push_back(tool_use_block(call, tool_input(call)));
  return content;
}

class MessageEventStream final : public EventSource {
 public:
  MessageEventStream(MessagesRequest request, StartedChat started, std::string id)
      : request_(std::move(request)), run_(std::move(started.run)), model_(std::move(started.model)),
        id_(std::move(id)), output_(request_.chat) {}

  bool next(std::string& out) override {
    if (!started_) {
      started_ = true;
      Json message = message_json(id_, model_, Json::array());
      message["usage"] = anthropic_usage_json({.prompt_tokens = static_cast<int64_t>(run_->prompt_ids(0).size())});
      out += sse_named_event("message_start", {{"type", "message_start"}, {"message", std::move(message)}});
      return true;
    }
    if (run_->poll(std::chrono::milliseconds(50), [&](int32_t, ChoiceDelta& d) { on_delta(d, out); })) return true;
    close_block(out);
    if (!run_->error().empty()) {
      out += sse_named_event("error", anthropic_error_body(ApiError(500, "generation failed: " + run_->error(), "")));
      return false;
    }
    Json delta = {{"stop_reason", stop_.stop_reason}, {"stop_sequence", stop_.stop_sequence}};
    out += sse_named_event("message_delta",
                           {{"type", "message_delta"}, {"delta", std::move(delta)}, {"usage", anthropic_usage_json(run_->usage())}});
    out += sse_named_event("message_stop", {{"type", "message_stop"}});
    return false;
  }

 private:
  enum class Block : uint8_t { kNone, kThinking, kText };

  void open_block(Json block, std::string& out) {
    out += sse_named_event("content_block_start",
                           {{"type", "content_block_start"}, {"index", index_}, {"content_block", std::move(block)}});
  }
  void close_block(std::string& out) {
    if (open_ == Block::kNone) return;
    out += sse_named_event("content_block_stop", {{"type", "content_block_stop"}, {"index", index_++}});
    open_ = Block::kNone;
  }
  void send_delta(Json delta, std::string& out) const {
    out += sse_named_event("content_block_delta",
                           {{"type", "content_block_delta"}, {"index", index_}, {"delta", std::move(delta)}});
  }

  // Text into a block of its kind: a new block when the kind changes.
  void send(Block kind, std::string_view text, std::string& out) {
    if (text.empty()) return;
    const bool thinking = kind == Block::kThinking;
    if (open_ != kind) {
      close_block(out);
      open_block(thinking ? Json{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}
                          : Json{{"type", "text"}, {"text", ""}},
                 out);
      open_ = kind;
    }
    send_delta(thinking ? Json{{"type", "thinking_delta"}, {"thinking", text}} : Json{{"type", "text_delta"}, {"text", text}},
               out);
  }

  // A call is a tool_use block opened with its name; its arguments come as input_json_delta
  // pieces, and it stops when the call is whole. Its block index is kept from the start.
  void send_call_delta(const ToolCallDelta& d, std::string& out) {
    if (!d.id.empty()) {
      close_block(out);
      open_block(tool_use_block({.name = d.name}, Json::object()), out);
      call_blocks_.push_back(index_++);
      has_calls_ = true;
    }
    const int64_t block = call_blocks_.at(static_cast<size_t>(d.call));
    if (!d.arguments.empty())
      out += sse_named_event("content_block_delta",
                             {{"type", "content_block_delta"},
                              {"index", block},
                              {"delta", {{"type", "input_json_delta"}, {"partial_json", d.arguments}}}});
    if (d.closes) out += sse_named_event("content_block_stop", {{"type", "content_block_stop"}, {"index", block}});
  }

  // Thinking, text, and the calls' deltas in the order they were written (text after a call
  // opens a new block).
  void send_answer(const ChatAnswer& answer, std::string& out) {
    send(Block::kThinking, answer.reasoning, out);
    in_written_order(
        answer, [&](std::string_view text) { send(Block::kText, text, out); },
        [&](const ToolCallDelta& d) { send_call_delta(d, out); });
  }

  void on_delta(ChoiceDelta& d, std::string& out) {
    send_answer(output_.push(d.text), out);
    if (d.finish_reason == FinishReason::kNone) return;
    send_answer(output_.finish(), out);
    close_block(out);
    stop_ = stop_info(d.finish_reason, d.stop_reason, has_calls_, request_.stop_sequences);
  }

  MessagesRequest request_;
  std::unique_ptr<GenerationRun> run_;
  std::string model_;
  std::string id_;
  ChatOutputStream output_;
  bool started_ = false;
  Block open_ = Block::kNone;
  int64_t index_ = 0;  // of the open block, or of the next one
  bool has_calls_ = false;
  std::vector<int64_t> call_blocks_;  // per call: its block's index
  StopInfo stop_;
};

}  // namespace

HttpReply create_message(const ServedModel& model, ReasoningFormat reasoning, const Json& body,
                         const ClientWatch& client) {
  const std::optional<std::string> name = read_string(body, "model");
  MessagesRequest request = read_messages_request(body, model.vocab_size, reasoning != ReasoningFormat::kNone);
  StartedChat started =
      start_chat(model, request.chat, {.model_name = name ? &*name : nullptr, .reasoning = reasoning});
  std::string id = "msg_" + random_alnum(24);
  if (request.chat.stream)
    return {.events = std::make_shared<MessageEventStream>(std::move(request), std::move(started), std::move(id))};
  const std::vector<ChoiceOutput> choices = collect_choices(*started.run, client);
  const ChatAnswer answer = parse_chat_answer(request.chat, choices.at(0).text);
  const StopInfo stop = stop_info(choices[0].finish_reason, choices[0].stop_reason, !answer.tool_calls.empty(),
                                  request.stop_sequences);
  Json j = message_json(id, started.model, content_json(answer));
  j["stop_reason"] = stop.stop_reason;
  j["stop_sequence"] = stop.stop_sequence;
  j["usage"] = anthropic_usage_json(started.run->usage());
  return {.body = dump_json(j)};
}

HttpReply count_message_tokens(const ServedModel& model, ReasoningFormat reasoning, const Json& body) {
  const std::optional<std::string> name = read_string(body, "model");
  check_model_name(model, name ? &*name : nullptr);
  ChatRequest chat;
  chat.render = read_messages_conversation(body, reasoning != ReasoningFormat::kNone, &chat.image_urls);
  Json j;
  j["input_tokens"] = encode_chat(model, chat).size();
  return {.body = dump_json(j)};
}

}  // namespace strata::server
