// ToolParser: how one model family writes tool calls in its output (vLLM's
// --tool-call-parser). A parser names the markers that may open a call and reads a call at
// such a marker; scan_tool_calls (shared by the whole-text and the streamed paths) walks
// the text with it, so the two paths agree. Text that is not a well-formed call, markers
// included, stays content: nothing the model wrote is lost.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/engine/tool_call_grammar.h"

namespace strata::server {

struct ToolCall {
  std::string id;         // call_<random> (Mistral: 9 alphanumerics, as its templates demand)
  std::string name;
  std::string arguments;  // JSON text of an object, as OpenAI sends it
};

struct ParsedOutput {
  std::string content;    // the text outside the calls (trimmed when there were calls)
  std::vector<ToolCall> tool_calls;
};

// What a parser read at a start marker.
struct CallMatch {
  enum class Kind : uint8_t {
    kCalls,     // markup read: `calls` (maybe none) and `content`, the text it stands for
    kNeedMore,  // could still become a call once more text comes (never when at_end)
    kNotCalls,  // not a call: its first `length` bytes stay content as written
  };
  Kind kind = Kind::kNotCalls;
  size_t length = 0;  // bytes of the text read (kCalls, kNotCalls); at least 1
  std::vector<ToolCall> calls;
  std::string content;
};

// A call still being written: its name, and the part of its arguments text that is settled
// (the whole call's arguments will start with it).
struct PartialCall {
  std::string name;
  std::string arguments;
};

// How a parser's calls are forced (tool_choice required / named): the literals of the
// constrained grammar (its functions filled in by the caller), and text the prompt ends with
// so that the output is only the calls (a special token the mask cannot write, e.g.
// Mistral's [TOOL_CALLS]); the output is parsed with that text in front.
struct ForcedShape {
  ToolCallFormat literals;
  std::string prompt_suffix;
};

class ToolParser {
 public:
  virtual ~ToolParser() = default;
  virtual std::string_view name() const = 0;
  // Texts that open a call (the earliest found is tried first).
  virtual std::span<const std::string_view> start_markers() const = 0;
  // `text` starts with one of the start markers and runs to the end of what has come.
  // `tools`: the request's tools (null when none), for schema-typed values. `at_end`: no
  // more text will come, so a call cut short may be taken as it is.
  virtual CallMatch match(std::string_view text, bool at_end, const nlohmann::ordered_json& tools) const = 0;
  // `text` starts with a start marker and match() needs more of it: the calls begun in it so
  // far, in order, each once its name is known. As the text grows, the list and each call's
  // arguments only grow, and the calls match() reads in the end extend them.
  virtual std::vector<PartialCall> partial_calls(std::string_view text, const nlohmann::ordered_json& tools) const = 0;
  // Markers that are special tokens: the output is decoded with them.
  virtual bool needs_special_tokens() const { return false; }
  // Null when the format cannot be forced by the constrained decoder.
  virtual std::optional<ForcedShape> forced_shape() const { return std::nullopt; }
  // For a format without a forced_shape: a GBNF grammar of its calls of `functions` (the
  // allowed tools' "function" objects), one or (parallel) more; null when there is none.
  // Throws strata::Error for tools the format cannot hold.
  virtual std::optional<std::string> forced_grammar(const nlohmann::ordered_json& functions, bool parallel) const {
    (void)functions;
    (void)parallel;
    return std::nullopt;
  }
  // For a format without a forced_shape or forced_grammar: the text that ends the prompt so that the output
  // is only the arguments of one call of `function` (null when there is none).
  virtual std::optional<std::string> one_call_prompt(std::string_view function) const {
    (void)function;
    return std::nullopt;
  }
  virtual std::string make_call_id() const;
};

struct ScannedText {
  std::string content;
  std::vector<ToolCall> calls;
  std::vector<size_t> content_before;  // per call: the bytes of content that precede it
  int32_t num_calls_at_start = -1;  // calls read by a match at byte 0; -1 when byte 0 was not read as calls
  size_t num_consumed = 0;  // bytes settled; the rest may still grow into a call (not at_end)
};

// Content and calls of `text` in order, as far as they are settled (all of it when at_end).
// A tail that could still grow into a start marker is not settled.
ScannedText scan_tool_calls(const ToolParser& parser, std::string_view text, bool at_end,
                            const nlohmann::ordered_json& tools);

// The whole output at once; content trimmed when there were calls.
ParsedOutput parse_tool_calls(const ToolParser& parser, std::string_view text,
                              const nlohmann::ordered_json& tools = nullptr);

}  // namespace strata::server
