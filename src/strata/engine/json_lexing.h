// Pieces both JSON recognisers (JsonGrammar, JsonSchemaGrammar) share: byte classes, the
// number lexer, and all-or-nothing feeding of a copyable recogniser.
#pragma once

#include <cstdint>
#include <string_view>

namespace strata::json_lexing {

inline bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
inline bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
inline bool is_hex(unsigned char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Where a number is: after '-', after a leading 0, in the integer part, after '.', in the
// fraction, after 'e', after the exponent's sign, in the exponent.
enum class Number : uint8_t { kSign, kZero, kInt, kDot, kFrac, kExp, kExpSign, kExpDigits };
enum class NumberStep : uint8_t { kTaken, kEnded, kRefused };

// The state of a number that starts with `c` ('-' or a digit).
inline Number number_start(unsigned char c) {
  return c == '-' ? Number::kSign : (c == '0' ? Number::kZero : Number::kInt);
}

// kTaken: c extends the number; kEnded: the number ended before c (c belongs to what
// follows); kRefused: c can neither extend nor end it. integer_only: no fraction or exponent.
inline NumberStep number_step(Number& state, unsigned char c, bool integer_only) {
  const bool digit = is_digit(c);
  switch (state) {
    case Number::kSign: if (!digit) return NumberStep::kRefused; state = c == '0' ? Number::kZero : Number::kInt; return NumberStep::kTaken;
    case Number::kZero:
    case Number::kInt:
      if (digit && state == Number::kInt) return NumberStep::kTaken;
      if (!integer_only && c == '.') { state = Number::kDot; return NumberStep::kTaken; }
      if (!integer_only && (c == 'e' || c == 'E')) { state = Number::kExp; return NumberStep::kTaken; }
      break;
    case Number::kDot: if (!digit) return NumberStep::kRefused; state = Number::kFrac; return NumberStep::kTaken;
    case Number::kFrac:
      if (digit) return NumberStep::kTaken;
      if (c == 'e' || c == 'E') { state = Number::kExp; return NumberStep::kTaken; }
      break;
    case Number::kExp:
      if (c == '+' || c == '-') { state = Number::kExpSign; return NumberStep::kTaken; }
      if (!digit) return NumberStep::kRefused;
      state = Number::kExpDigits;
      return NumberStep::kTaken;
    case Number::kExpSign: if (!digit) return NumberStep::kRefused; state = Number::kExpDigits; return NumberStep::kTaken;
    case Number::kExpDigits: if (digit) return NumberStep::kTaken; break;
  }
  return digit ? NumberStep::kRefused : NumberStep::kEnded;  // a digit here: a leading zero's
}

// A string's body, after its opening quote: escapes (\uXXXX too), no raw control bytes.
class StringBody {
 public:
  enum class Step : uint8_t { kTaken, kClosed, kRefused };
  bool in_escape() const { return escaped_ || hex_left_ > 0; }
  Step step(unsigned char c) {
    if (hex_left_ > 0) {
      if (!is_hex(c)) return Step::kRefused;
      --hex_left_;
      return Step::kTaken;
    }
    if (escaped_) {
      escaped_ = false;
      if (c == 'u') hex_left_ = 4;
      else if (c != '"' && c != '\\' && c != '/' && c != 'b' && c != 'f' && c != 'n' && c != 'r' && c != 't')
        return Step::kRefused;
      return Step::kTaken;
    }
    if (c == '"') return Step::kClosed;
    if (c == '\\') escaped_ = true;
    return c >= 0x20 ? Step::kTaken : Step::kRefused;  // control characters must be escaped
  }

 private:
  bool escaped_ = false;
  uint8_t hex_left_ = 0;
};

// Feeds `bytes` to a recogniser with step(c); all or nothing.
template <typename Recogniser>
bool feed_all(Recogniser& r, std::string_view bytes) {
  const Recogniser before = r;
  for (char c : bytes)
    if (!r.step(static_cast<unsigned char>(c))) {
      r = before;
      return false;
    }
  return true;
}

}  // namespace strata::json_lexing
