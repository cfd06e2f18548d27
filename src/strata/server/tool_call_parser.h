// Tool calls in Hermes/Qwen style model output: <tool_call>{"name": ..., "arguments": {...}}
// </tool_call>, any number of them, anywhere in the text. A block whose JSON does not parse
// (or has no string "name") stays in the content, so nothing the model wrote is lost.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace strata::server {

inline constexpr std::string_view kToolCallOpen = "<tool_call>";
inline constexpr std::string_view kToolCallClose = "</tool_call>";

struct ToolCall {
  std::string id;         // call_<random>
  std::string name;
  std::string arguments;  // JSON text of an object, as OpenAI sends it
};

struct ParsedOutput {
  std::string content;    // the text outside the tool-call blocks, trimmed
  std::vector<ToolCall> tool_calls;
};

// An unclosed final block (generation stopped before </tool_call>) is parsed too.
ParsedOutput parse_tool_calls(std::string_view text);

// "call_" + 24 random alphanumerics.
std::string make_tool_call_id();

}  // namespace strata::server
