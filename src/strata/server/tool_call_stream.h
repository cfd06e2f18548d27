// Streaming side of tool-call parsing: content deltas pass through until "<tool_call>"
// starts; from there the text is held and parsed once the choice finishes. A tail that could
// still grow into "<tool_call>" is held back, so a client never sees half a tag.
#pragma once

#include <string>
#include <string_view>

#include "strata/server/tool_call_parser.h"

namespace strata::server {

class ToolCallStream {
 public:
  // The content that can be sent now.
  std::string push(std::string_view delta);
  // At the end: the held-back content and the parsed calls.
  ParsedOutput finish();

 private:
  std::string pending_;    // content not yet sent (a possible tag prefix)
  std::string call_text_;  // from the first "<tool_call>" on
  bool in_calls_ = false;
};

}  // namespace strata::server
