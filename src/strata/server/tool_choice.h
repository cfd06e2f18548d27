// What a chat request says about tool calls: tool_choice ("auto", "none", "required" or a
// named function) and parallel_tool_calls. When a call is forced, the ToolCallFormat the
// engine enforces by constrained decoding: the Hermes blocks tool_call_parser reads, the name
// one of the allowed functions, the arguments following that function's parameters schema;
// one call for a named function, one or more for "required" (one when not parallel).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "strata/engine/tool_call_grammar.h"
#include "strata/server/json_fields.h"

namespace strata::server {

enum class ToolChoiceMode : uint8_t { kAuto, kNone, kRequired, kNamed };

struct ToolChoice {
  ToolChoiceMode mode = ToolChoiceMode::kAuto;
  bool parallel = true;                              // parallel_tool_calls
  std::shared_ptr<const ToolCallFormat> forced;      // kRequired / kNamed: the calls to enforce
};

// `tools`: the request's tools as read_conversation checked them (null when none). A 400
// naming the field for a malformed tool_choice, a forced choice without tools or naming a
// function that is not among them, and (forced only) tool names the format cannot hold or a
// `strict` function whose parameters schema cannot be enforced. A non-strict schema the
// compiler refuses lets the arguments be any JSON object.
ToolChoice read_tool_choice(const Json& body, const Json& tools);

// The Hermes format (<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>) for these
// tools, sorted by name; `only`: just the function of that name.
std::shared_ptr<const ToolCallFormat> hermes_tool_call_format(const Json& tools, const std::string* only,
                                                              bool parallel);

}  // namespace strata::server
