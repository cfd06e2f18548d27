#include "strata/server/tool_call_stream.h"

#include <algorithm>

#include "strata/server/stream_tags.h"

namespace strata::server {
namespace {

// A parser keeps its partial calls consistent with its whole ones (the tests check every
// split); should one not, the call is sent afresh rather than with arguments that do not add up.
bool extends(const ToolCall& call, const auto& open) {
  return call.name == open.name && call.arguments.starts_with(open.arguments);
}

}  // namespace

void ToolCallStream::open_call(ToolStreamStep& step, std::string id, std::string name, std::string arguments) {
  const int32_t call = num_calls_++;
  const size_t at = step.content.size();
  step.deltas.push_back({.call = call, .id = id, .name = name, .content_before = at});
  if (!arguments.empty()) step.deltas.push_back({.call = call, .arguments = arguments, .content_before = at});
  open_.push_back({.call = call, .id = std::move(id), .name = std::move(name), .arguments = std::move(arguments)});
}

// The block the open calls belong to has settled: as calls (each gets the rest of its
// arguments and keeps its id), or as no calls (their deltas just close).
void ToolCallStream::settle_open(ScannedText& scanned, ToolStreamStep& step) {
  const size_t num_read = static_cast<size_t>(std::max(scanned.num_calls_at_start, 0));
  for (size_t i = 0; i < open_.size(); ++i) {
    OpenCall& open = open_[i];
    ToolCallDelta last{.call = open.call, .closes = true, .content_before = 0};
    if (i < num_read && extends(scanned.calls[i], open)) {
      ToolCall& call = scanned.calls[i];
      call.id = open.id;
      last.arguments = call.arguments.substr(open.arguments.size());
      last.content_before = scanned.content_before[i];
    }
    step.deltas.push_back(std::move(last));
  }
  std::vector<bool> continued(scanned.calls.size(), false);
  for (size_t i = 0; i < std::min(open_.size(), num_read); ++i) continued[i] = extends(scanned.calls[i], open_[i]);
  open_.clear();
  for (size_t i = 0; i < scanned.calls.size(); ++i) {
    if (continued[i]) continue;
    ToolCall& call = scanned.calls[i];
    const int32_t number = num_calls_++;
    const size_t at = scanned.content_before[i];
    step.deltas.push_back({.call = number, .id = call.id, .name = call.name, .content_before = at});
    step.deltas.push_back({.call = number, .arguments = call.arguments, .closes = true, .content_before = at});
  }
}

// The block still being written at the start of pending_: deltas for what it added.
void ToolCallStream::stream_open(ToolStreamStep& step) {
  if (find_first_tag(pending_, parser_->start_markers()).pos != 0) return;
  std::vector<PartialCall> calls = parser_->partial_calls(pending_, tools_);
  if (calls.size() < open_.size()) return;  // held until the block settles
  for (size_t i = 0; i < open_.size(); ++i)
    if (calls[i].name != open_[i].name || !calls[i].arguments.starts_with(open_[i].arguments)) return;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (i >= open_.size()) {
      open_call(step, parser_->make_call_id(), std::move(calls[i].name), std::move(calls[i].arguments));
      continue;
    }
    OpenCall& open = open_[i];
    if (calls[i].arguments.size() == open.arguments.size()) continue;
    step.deltas.push_back({.call = open.call,
                           .arguments = calls[i].arguments.substr(open.arguments.size()),
                           .content_before = step.content.size()});
    open.arguments = std::move(calls[i].arguments);
  }
}

ToolStreamStep ToolCallStream::scan(bool at_end) {
  ScannedText scanned = scan_tool_calls(*parser_, pending_, at_end, tools_);
  pending_.erase(0, scanned.num_consumed);
  ToolStreamStep step{.content = std::move(scanned.content)};
  if (scanned.num_consumed > 0 || open_.empty()) settle_open(scanned, step);
  step.calls = std::move(scanned.calls);
  if (!at_end) stream_open(step);
  return step;
}

ToolStreamStep ToolCallStream::push(std::string_view delta) {
  pending_.append(delta);
  return scan(/*at_end=*/false);
}

ToolStreamStep ToolCallStream::finish() {
  ToolStreamStep step = scan(/*at_end=*/true);
  pending_.clear();
  return step;
}

}  // namespace strata::server
