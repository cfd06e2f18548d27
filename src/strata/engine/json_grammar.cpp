#include "strata/engine/json_grammar.h"

namespace strata {
namespace {

bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
bool is_hex(unsigned char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

}  // namespace

bool JsonGrammar::feed(unsigned char c) {
  const JsonGrammar before = *this;
  if (step(c)) return true;
  *this = before;
  return false;
}

bool JsonGrammar::feed(std::string_view bytes) {
  const JsonGrammar before = *this;
  for (char c : bytes)
    if (!step(static_cast<unsigned char>(c))) {
      *this = before;
      return false;
    }
  return true;
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
    case '"': mode_ = Mode::kString; string_is_key_ = false; return true;
    case 't': literal_left_ = "rue"; mode_ = Mode::kLiteral; return true;
    case 'f': literal_left_ = "alse"; mode_ = Mode::kLiteral; return true;
    case 'n': literal_left_ = "ull"; mode_ = Mode::kLiteral; return true;
    default: break;
  }
  if (c != '-' && !is_digit(c)) return false;
  mode_ = Mode::kNumber;
  num_ = c == '-' ? Num::kSign : (c == '0' ? Num::kZero : Num::kInt);
  return true;
}

// Inside a number: digits extend it; any other byte ends it (if it may end here) and is
// then read in the enclosing context.
bool JsonGrammar::number(unsigned char c) {
  const bool digit = is_digit(c);
  switch (num_) {
    case Num::kSign: if (!digit) return false; num_ = c == '0' ? Num::kZero : Num::kInt; return true;
    case Num::kZero:
    case Num::kInt:
      if (digit && num_ == Num::kInt) return true;
      if (c == '.') { num_ = Num::kDot; return true; }
      if (c == 'e' || c == 'E') { num_ = Num::kExp; return true; }
      break;
    case Num::kDot: if (!digit) return false; num_ = Num::kFrac; return true;
    case Num::kFrac:
      if (digit) return true;
      if (c == 'e' || c == 'E') { num_ = Num::kExp; return true; }
      break;
    case Num::kExp:
      if (c == '+' || c == '-') { num_ = Num::kExpSign; return true; }
      if (!digit) return false;
      num_ = Num::kExpDigits;
      return true;
    case Num::kExpSign: if (!digit) return false; num_ = Num::kExpDigits; return true;
    case Num::kExpDigits: if (digit) return true; break;
  }
  if (digit) return false;  // a leading zero followed by a digit
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
      if (c == '"') {
        if (string_is_key_) mode_ = Mode::kColon;
        else end_value();
        return true;
      }
      if (c == '\\') { mode_ = Mode::kEscape; return true; }
      return c >= 0x20;  // control characters must be escaped
    case Mode::kEscape:
      if (c == 'u') { mode_ = Mode::kUnicode; hex_left_ = 4; return true; }
      if (c != '"' && c != '\\' && c != '/' && c != 'b' && c != 'f' && c != 'n' && c != 'r' && c != 't') return false;
      mode_ = Mode::kString;
      return true;
    case Mode::kUnicode:
      if (!is_hex(c)) return false;
      if (--hex_left_ == 0) mode_ = Mode::kString;
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
