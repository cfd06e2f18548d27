#include "strata/server/tool_call_stream.h"

#include <algorithm>

namespace strata::server {
namespace {

// Length of the longest suffix of `text` that is a proper prefix of the open tag.
size_t partial_tag_length(std::string_view text) {
  const size_t max_len = std::min(text.size(), kToolCallOpen.size() - 1);
  for (size_t len = max_len; len > 0; --len)
    if (text.substr(text.size() - len) == kToolCallOpen.substr(0, len)) return len;
  return 0;
}

}  // namespace

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
  const size_t keep = partial_tag_length(pending_);
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
