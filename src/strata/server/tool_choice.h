// What a chat request says about tool calls: tool_choice ("auto", "none", "required" or a
// named function) and parallel_tool_calls. When a call is forced, the ToolCallFormat the
// engine enforces by constrained decoding, in the served model's own format (its tool-call
// parser's): the name one of the allowed functions, the arguments following that function's
// parameters schema; one call for a named function, one or more for "required" (one when not
// parallel). A parser whose format the decoder cannot write refuses forcing with a 400.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "strata/engine/grammar.h"
#include "strata/engine/tool_call_grammar.h"
#include "strata/server/json_fields.h"
#include "strata/server/tool_parsers/tool_parser.h"

namespace strata::server {

enum class ToolChoiceMode : uint8_t { kAuto, kNone, kRequired, kNamed };

struct ToolChoice {
  ToolChoiceMode mode = ToolChoiceMode::kAuto;
  bool parallel = true;                          // parallel_tool_calls
  std::string name;                              // kNamed: the function
  std::shared_ptr<const ToolCallFormat> forced;  // kRequired / kNamed, once force_tool_calls ran
  // Or, for a format that opens each call with special tokens: the one call's arguments alone.
  std::shared_ptr<const CompiledSchema> forced_arguments;
  std::shared_ptr<const CompiledGrammar> forced_grammar;  // or the calls as a grammar (XML formats)
  std::string forced_prefix;                     // the prompt ends with it; the output follows it

  bool forces() const { return mode == ToolChoiceMode::kRequired || mode == ToolChoiceMode::kNamed; }
};

// `tools`: the request's tools as read_conversation checked them (null when none). A 400
// naming the field for a malformed tool_choice, a forced choice without tools or naming a
// function that is not among them.
ToolChoice read_tool_choice(const Json& body, const Json& tools);

// For a forcing choice: `forced` (or, for one call in a format whose calls open with special
// tokens, `forced_arguments`) and `forced_prefix` in `parser`'s format. A 400 when the
// parser's format cannot be forced, for tool names the format cannot hold, or a `strict`
// function whose parameters schema cannot be enforced. A non-strict schema the compiler
// refuses lets the arguments be any JSON object.
void force_tool_calls(const ToolParser& parser, const Json& tools, ToolChoice& choice);

}  // namespace strata::server
