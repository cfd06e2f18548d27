#include "strata/server/tool_call_stream.h"

namespace strata::server {

ToolStreamStep ToolCallStream::scan(bool at_end) {
  ScannedText scanned = scan_tool_calls(*parser_, pending_, at_end, tools_);
  pending_.erase(0, scanned.num_consumed);
  return {.content = std::move(scanned.content), .calls = std::move(scanned.calls)};
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
