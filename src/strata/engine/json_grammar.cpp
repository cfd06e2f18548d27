#include "strata/engine/json_grammar.h"

#include "strata/engine/json_lexing.h"

namespace strata {

using namespace json_lexing;

bool JsonGrammar::feed(unsigned char c) {
  const char one = static_cast<char>(c);
  return feed_all(*this, std::string_view(&one, 1));
}

bool JsonGrammar::feed(std::string_view bytes) { return feed_all(*this, bytes); }

std::string JsonGrammar::key() const {
  std::string out = {static_cast<char>(mode_), static_cast<char>(string_is_key_), static_cast<char>(depth_)};
  num_.append_key(out);
  out.append(reinterpret_cast<const char*>(&string_), sizeof(string_));
  out.append(literal_left_);  // the rest of a literal: its text says which
  out.append(stack_.data(), depth_);
  return out;
}

bool JsonGrammar::end_value() {
  mode_ = depth_ == 0 ? Mode::kDone : Mode::kCommaOrEnd;
  return true;
}

bool JsonGrammar::start_value(unsigned char c) {
  switch (c) {
    case '{':
    case '[':
      if (depth_ == kMaxDepth) return false;
      stack_[depth_++] = static_cast<char>(c);
      mode_ = c == '{' ? Mode::kKeyOrEnd : Mode::kValue;  // kValue also takes ']'
      return true;
    case '"': mode_ = Mode::kString; string_ = {}; string_is_key_ = false; return true;
    case 't': literal_left_ = "rue"; mode_ = Mode::kLiteral; return true;
    case 'f': literal_left_ = "alse"; mode_ = Mode::kLiteral; return true;
    case 'n': literal_left_ = "ull"; mode_ = Mode::kLiteral; return true;
    default: break;
  }
  if (c != '-' && !is_digit(c)) return false;
  mode_ = Mode::kNumber;
  return num_.start(c, NumberBounds{});
}

// Inside a number: digits extend it; any other byte ends it (if it may end here) and is
// then read in the enclosing context.
bool JsonGrammar::number(unsigned char c) {
  switch (num_.step(c, NumberBounds{})) {
    case NumberStep::kTaken: return true;
    case NumberStep::kRefused: return false;
    case NumberStep::kEnded: break;
  }
  end_value();
  return step(c);
}

bool JsonGrammar::step(unsigned char c) {
  switch (mode_) {
    case Mode::kStart:
      if (is_space(c)) return true;
      if (c != '{') return false;
      return start_value(c);
    case Mode::kValue:
      if (is_space(c)) return true;
      if (c == ']' && depth_ > 0 && stack_[depth_ - 1] == '[') {  // an empty array
        --depth_;
        return end_value();
      }
      return start_value(c);
    case Mode::kKeyOrEnd:
    case Mode::kKey:
      if (is_space(c)) return true;
      if (c == '}' && mode_ == Mode::kKeyOrEnd) {
        --depth_;
        return end_value();
      }
      if (c != '"') return false;
      mode_ = Mode::kString;
      string_ = {};
      string_is_key_ = true;
      return true;
    case Mode::kColon:
      if (is_space(c)) return true;
      if (c != ':') return false;
      mode_ = Mode::kValue;
      return true;
    case Mode::kCommaOrEnd:
      if (is_space(c)) return true;
      if (c == ',') {
        mode_ = stack_[depth_ - 1] == '{' ? Mode::kKey : Mode::kValue;
        return true;
      }
      if (c != (stack_[depth_ - 1] == '{' ? '}' : ']')) return false;
      --depth_;
      return end_value();
    case Mode::kString:
      switch (string_.step(c)) {
        case StringBody::Step::kTaken: return true;
        case StringBody::Step::kRefused: return false;
        case StringBody::Step::kClosed: break;
      }
      if (string_is_key_) mode_ = Mode::kColon;
      else end_value();
      return true;
    case Mode::kNumber: return number(c);
    case Mode::kLiteral:
      if (literal_left_.empty() || c != static_cast<unsigned char>(literal_left_.front())) return false;
      literal_left_.remove_prefix(1);
      if (literal_left_.empty()) end_value();
      return true;
    case Mode::kDone: return is_space(c);
  }
  return false;
}

}  // namespace strata
