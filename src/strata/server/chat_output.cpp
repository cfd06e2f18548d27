#include "strata/server/chat_output.h"

#include "strata/server/tool_parsers/parse_helpers.h"
#include "strata/server/tool_parsers/tool_parser_registry.h"

namespace strata::server {
namespace {

const ToolParser& parser_of(const ChatRequest& chat) {
  return chat.tool_parser != nullptr ? *chat.tool_parser : default_tool_parser();
}

}  // namespace

ChatAnswer parse_chat_answer(const ChatRequest& chat, std::string_view text) {
  ChatOutputStream stream(chat, /*include_reasoning=*/true);  // the reply decides what to show
  ChatAnswer answer = stream.push(text);
  ChatAnswer rest = stream.finish();
  answer.reasoning += rest.reasoning;
  answer.content += rest.content;
  for (ToolCall& call : rest.tool_calls) answer.tool_calls.push_back(std::move(call));
  if (!answer.tool_calls.empty()) answer.content = std::string(trim_blank(answer.content));
  return answer;
}

ChatOutputStream::ChatOutputStream(const ChatRequest& chat, bool include_reasoning)
    : parse_tool_calls_(chat.parse_tool_calls), include_reasoning_(include_reasoning),
      parallel_(chat.tool_choice.parallel), reasoning_(chat.reasoning, chat.prompt_tail),
      reasoning_calls_(parser_of(chat), chat.render.tools), content_calls_(parser_of(chat), chat.render.tools) {
  // A forced call's opening marker ended the prompt; the parser reads the calls after it.
  if (parse_tool_calls_) content_calls_.push(chat.tool_choice.forced_prefix);
}

// parallel_tool_calls false: only the first call (a forced choice never writes a second).
void ChatOutputStream::add_calls(std::vector<ToolCall>& from, std::vector<ToolCall>& to) {
  for (ToolCall& call : from) {
    if (!parallel_ && num_calls_ > 0) break;
    ++num_calls_;
    to.push_back(std::move(call));
  }
}

// The deltas of one stream's calls with their index in the answer; with parallel_tool_calls
// false, those of calls after the first are dropped.
void ChatOutputStream::add_deltas(std::vector<ToolCallDelta>& from, std::vector<int32_t>& indices, bool in_content,
                                  std::vector<ToolCallDelta>& to) {
  for (ToolCallDelta& delta : from) {
    if (static_cast<size_t>(delta.call) >= indices.size()) {
      const bool dropped = !parallel_ && num_streamed_calls_ > 0;
      indices.push_back(dropped ? -1 : num_streamed_calls_++);
    }
    const int32_t index = indices[static_cast<size_t>(delta.call)];
    if (index < 0) continue;
    delta.call = index;
    if (!in_content) delta.content_before = 0;
    to.push_back(std::move(delta));
  }
}

ChatAnswer ChatOutputStream::route(ReasoningDelta text, bool at_end) {
  ChatAnswer out;
  if (!parse_tool_calls_) {
    out.reasoning = std::move(text.reasoning);
    out.content = std::move(text.content);
  } else {
    ToolStreamStep thinking = reasoning_calls_.push(text.reasoning);
    ToolStreamStep answer = content_calls_.push(text.content);
    if (at_end) {
      ToolStreamStep a = reasoning_calls_.finish(), b = content_calls_.finish();
      thinking.content += a.content;
      answer.content += b.content;
      thinking.calls.insert(thinking.calls.end(), a.calls.begin(), a.calls.end());
      answer.calls.insert(answer.calls.end(), b.calls.begin(), b.calls.end());
      for (ToolCallDelta& d : a.deltas) thinking.deltas.push_back(std::move(d));
      for (ToolCallDelta& d : b.deltas) {
        d.content_before += answer.content.size() - b.content.size();
        answer.deltas.push_back(std::move(d));
      }
    }
    add_deltas(thinking.deltas, reasoning_indices_, /*in_content=*/false, out.tool_call_deltas);
    add_deltas(answer.deltas, content_indices_, /*in_content=*/true, out.tool_call_deltas);
    out.reasoning = std::move(thinking.content);
    out.content = std::move(answer.content);
    add_calls(thinking.calls, out.tool_calls);
    add_calls(answer.calls, out.tool_calls);
  }
  if (!include_reasoning_) out.reasoning.clear();
  return out;
}

ChatAnswer ChatOutputStream::push(std::string_view text) { return route(reasoning_.push(text), /*at_end=*/false); }

ChatAnswer ChatOutputStream::finish() { return route(reasoning_.finish(), /*at_end=*/true); }

}  // namespace strata::server
