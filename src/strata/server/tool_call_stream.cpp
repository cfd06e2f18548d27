#include "strata/server/tool_call_stream.h"

#include "strata/server/stream_tags.h"

namespace strata::server {

std::string ToolCallStream::push(std::string_view delta) {
  if (in_calls_) {
    call_text_.append(delta);
    return {};
  }
  pending_.append(delta);
  const size_t open = pending_.find(kToolCallOpen);
  if (open != std::string::npos) {
    in_calls_ = true;
    call_text_ = pending_.substr(open);
    std::string out = pending_.substr(0, open);
    pending_.clear();
    return out;
  }
  const size_t keep = partial_tag_length(pending_, std::span(&kToolCallOpen, 1));
  std::string out = pending_.substr(0, pending_.size() - keep);
  pending_.erase(0, pending_.size() - keep);
  return out;
}

ParsedOutput ToolCallStream::finish() {
  ParsedOutput parsed = parse_tool_calls(call_text_);
  if (parsed.tool_calls.empty()) parsed.content = call_text_;
  parsed.content = pending_ + parsed.content;
  pending_.clear();
  call_text_.clear();
  return parsed;
}

}  // namespace strata::server
