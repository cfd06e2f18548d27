// ToolCallGrammar: a byte-at-a-time recogniser of a model's tool-call blocks, for tool_choice
// "required" or a named function: calls_begin once, then each block is call_begin, one of the
// allowed names, name_end, the arguments (JSON following that function's parameters schema)
// and call_end; with parallel calls, more blocks may follow, each after the separator; then
// calls_end once (a list's "]"). Like the JSON
// recognisers it is a small copyable state, so JsonTokenMask can walk the vocabulary with it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/engine/json_schema_grammar.h"

namespace strata {

// The model's tool-call format with the functions it may call (built once per request).
struct ToolCallFormat {
  struct Function {
    std::string name;  // as written inside the JSON string: no quote, backslash or control byte
    std::shared_ptr<const CompiledSchema> arguments;  // its root node is an object
  };
  std::vector<Function> functions;  // sorted by name, names distinct, at least one
  std::string calls_begin;          // once before the first call, e.g. [ (may be empty)
  std::string call_begin;           // up to the name, e.g. <tool_call>\n{"name": "
  std::string name_end;             // from the name to the arguments, e.g. ", "arguments":
  std::string call_end;             // after the arguments, e.g. }\n</tool_call>
  std::string separator;            // between two calls, e.g. \n (not empty when parallel)
  std::string calls_end;            // once after the last call, e.g. ] (may be empty; else it starts
                                    // with another byte than the separator)
  bool parallel = true;             // false: exactly one call

  // Throws strata::Error when the parts break the invariants above.
  void check() const;
};

class ToolCallGrammar {
 public:
  // `format` must outlive the grammar and its copies (the sequence holds it).
  explicit ToolCallGrammar(const ToolCallFormat* format)
      : format_(format), phase_(format->calls_begin.empty() ? Phase::kCallBegin : Phase::kCallsBegin),
        arguments_(nullptr) {}

  bool feed(unsigned char c);
  bool feed(std::string_view bytes);
  // A call has closed and nothing may follow (parallel off).
  bool done() const { return phase_ == Phase::kDone; }
  // A call has closed and the output may end here (another call may follow): right after a
  // call, or after the separator (a trailing blank the parser trims); never before calls_end.
  bool can_end() const {
    return num_calls_ > 0 && pos_ == 0 && format_->calls_end.empty() &&
           (phase_ == Phase::kNextCall || phase_ == Phase::kCallBegin);
  }
  int32_t num_calls() const { return num_calls_; }

 private:
  enum class Phase : uint8_t { kCallsBegin, kCallBegin, kName, kNameEnd, kArguments, kCallEnd, kNextCall, kCallsEnd, kDone };
  template <typename R> friend bool json_lexing::feed_all(R&, std::string_view);
  bool step(unsigned char c);
  bool literal_step(unsigned char c);
  bool name_step(unsigned char c);
  void enter(Phase phase);
  const std::string& literal() const;

  const ToolCallFormat* format_;
  Phase phase_;
  uint32_t pos_ = 0;             // bytes of the current literal or name read
  uint32_t lo_ = 0, hi_ = 0;     // kName: the functions whose names start with the bytes read
  JsonSchemaGrammar arguments_;  // kArguments: the chosen function's
  int32_t num_calls_ = 0;
};

}  // namespace strata
