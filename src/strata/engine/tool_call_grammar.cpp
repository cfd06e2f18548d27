#include "strata/engine/tool_call_grammar.h"

#include <algorithm>

#include "strata/core/error.h"

namespace strata {

void ToolCallFormat::check() const {
  if (functions.empty()) fail("a tool-call format needs at least one function");
  if (call_begin.empty() || name_end.empty() || call_end.empty() || (parallel && separator.empty()))
    fail("a tool-call format needs a call_begin, name_end and call_end (and a separator for parallel calls)");
  if (!calls_end.empty() && !separator.empty() && calls_end.front() == separator.front())
    fail("a tool-call format's calls_end '{}' must start with another byte than its separator '{}'", calls_end,
         separator);
  for (size_t i = 0; i < functions.size(); ++i) {
    const Function& f = functions[i];
    if (i > 0 && !(functions[i - 1].name < f.name))
      fail("tool-call functions must be sorted by name without repeats; '{}' comes after '{}'", f.name,
           functions[i - 1].name);
    for (char c : f.name)
      if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == name_end.front())
        fail("tool name '{}' holds a quote, backslash or control character; rename the function", f.name);
    if (f.arguments == nullptr || f.arguments->nodes[f.arguments->root].kind != CompiledSchema::Kind::kObject)
      fail("the arguments of tool '{}' must be a JSON object schema", f.name);
  }
}

bool ToolCallGrammar::feed(unsigned char c) {
  const char one = static_cast<char>(c);
  return json_lexing::feed_all(*this, std::string_view(&one, 1));
}

bool ToolCallGrammar::feed(std::string_view bytes) { return json_lexing::feed_all(*this, bytes); }

const std::string& ToolCallGrammar::literal() const {
  switch (phase_) {
    case Phase::kCallsBegin: return format_->calls_begin;
    case Phase::kCallBegin: return format_->call_begin;
    case Phase::kNameEnd: return format_->name_end;
    case Phase::kCallEnd: return format_->call_end;
    case Phase::kCallsEnd: return format_->calls_end;
    default: return format_->separator;
  }
}

void ToolCallGrammar::enter(Phase phase) {
  phase_ = phase;
  pos_ = 0;
  if (phase == Phase::kName) {
    lo_ = 0;
    hi_ = static_cast<uint32_t>(format_->functions.size());
  } else if (phase == Phase::kArguments) {
    arguments_ = JsonSchemaGrammar(format_->functions[lo_].arguments.get());
  }
}

bool ToolCallGrammar::step(unsigned char c) {
  switch (phase_) {
    case Phase::kName: return name_step(c);
    case Phase::kArguments:
      if (!arguments_.feed(c)) return false;
      if (arguments_.done()) enter(Phase::kCallEnd);  // the root is an object: done at its '}'
      return true;
    case Phase::kDone: return false;
    case Phase::kNextCall:  // the separator, or the list's end
      if (pos_ == 0 && !format_->calls_end.empty() && c == static_cast<unsigned char>(format_->calls_end.front()))
        enter(Phase::kCallsEnd);
      return literal_step(c);
    default: return literal_step(c);
  }
}

bool ToolCallGrammar::literal_step(unsigned char c) {
  const std::string& text = literal();
  if (pos_ >= text.size() || static_cast<unsigned char>(text[pos_]) != c) return false;
  if (++pos_ < text.size()) return true;
  switch (phase_) {
    case Phase::kCallsBegin: enter(Phase::kCallBegin); break;
    case Phase::kCallBegin: enter(Phase::kName); break;
    case Phase::kNameEnd: enter(Phase::kArguments); break;
    case Phase::kCallEnd:
      ++num_calls_;
      if (format_->parallel) enter(Phase::kNextCall);
      else enter(format_->calls_end.empty() ? Phase::kDone : Phase::kCallsEnd);
      break;
    case Phase::kCallsEnd: enter(Phase::kDone); break;
    default: enter(Phase::kCallBegin); break;  // the separator
  }
  return true;
}

// functions[lo_, hi_) are the names that start with the pos_ bytes read; sorted, so those
// that go on with byte c are a contiguous run of them, after any that end here.
bool ToolCallGrammar::name_step(unsigned char c) {
  const std::vector<ToolCallFormat::Function>& fns = format_->functions;
  if (c == static_cast<unsigned char>(format_->name_end.front())) {
    if (fns[lo_].name.size() != pos_) return false;  // no allowed name ends here
    enter(Phase::kNameEnd);
    return literal_step(c);
  }
  const auto byte_at = [this](const ToolCallFormat::Function& f) { return static_cast<unsigned char>(f.name[pos_]); };
  const auto begin = fns.begin() + lo_, end = fns.begin() + hi_;
  const auto first = std::partition_point(begin, end, [&](const auto& f) { return f.name.size() <= pos_ || byte_at(f) < c; });
  const auto last = std::partition_point(first, end, [&](const auto& f) { return f.name.size() > pos_ && byte_at(f) == c; });
  if (first == last) return false;
  lo_ = static_cast<uint32_t>(first - fns.begin());
  hi_ = static_cast<uint32_t>(last - fns.begin());
  ++pos_;
  return true;
}

}  // namespace strata
