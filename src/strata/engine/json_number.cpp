#include "strata/engine/json_number.h"

namespace strata {
namespace {

using json_lexing::Number;
using json_lexing::NumberStep;

// Some number of magnitude `m` followed by 0..`more` further digits, with the sign, meets [lo, hi].
bool reachable(bool negative, int64_t m, int more, int64_t lo, int64_t hi) {
  __int128 scale = 1;
  for (int j = 0; j <= more; ++j, scale *= 10) {
    const __int128 first = static_cast<__int128>(m) * scale, last = first + scale - 1;
    const __int128 a = negative ? -last : first, b = negative ? -first : last;
    if (a <= hi && b >= lo) return true;
    if (m == 0) break;  // a leading zero takes no more digits
  }
  return false;
}

}  // namespace

bool BoundedNumber::start(unsigned char c, const NumberBounds& b) {
  *this = BoundedNumber();
  if (c == '-') {
    if (!b.negative) return false;
    negative_ = true;
    return true;
  }
  if (!b.non_negative || !json_lexing::is_digit(c) || !digit_fits(c, b)) return false;
  state_ = json_lexing::number_start(c);
  magnitude_ = c - '0';
  num_digits_ = 1;
  return true;
}

bool BoundedNumber::digit_fits(unsigned char c, const NumberBounds& b) const {
  const int64_t m = magnitude_ * 10 + (c - '0');
  const int digits = num_digits_ + 1;
  return digits <= NumberBounds::kMaxIntegerDigits &&
         reachable(negative_, m, m == 0 ? 0 : NumberBounds::kMaxIntegerDigits - digits, b.lo, b.hi);
}

bool BoundedNumber::may_end(const NumberBounds& b) const {
  const int64_t value = negative_ ? -magnitude_ : magnitude_;
  return value >= b.lo && value <= b.hi;
}

NumberStep BoundedNumber::step(unsigned char c, const NumberBounds& b) {
  const bool digit = json_lexing::is_digit(c);
  const bool in_integer = state_ == Number::kSign || state_ == Number::kInt;
  if (digit && in_integer && !digit_fits(c, b)) return NumberStep::kRefused;
  if (digit && (state_ == Number::kDot || state_ == Number::kFrac) && num_digits_ >= NumberBounds::kMaxFractionDigits)
    return NumberStep::kRefused;
  if (digit && (state_ == Number::kExp || state_ == Number::kExpSign || state_ == Number::kExpDigits) &&
      num_digits_ >= NumberBounds::kMaxExponentDigits)
    return NumberStep::kRefused;
  if ((c == 'e' || c == 'E') && b.bounded()) return NumberStep::kRefused;  // an exponent would escape the bounds
  const Number before = state_;
  const NumberStep result = json_lexing::number_step(state_, c, b.integer);
  if (result == NumberStep::kEnded) return may_end(b) ? NumberStep::kEnded : NumberStep::kRefused;
  if (result != NumberStep::kTaken) return result;
  if (state_ != before && !(before == Number::kSign && digit)) num_digits_ = 0;  // a new part began
  if (digit) {
    if (in_integer) magnitude_ = magnitude_ * 10 + (c - '0');
    ++num_digits_;
  }
  return NumberStep::kTaken;
}

void BoundedNumber::append_key(std::string& out) const {
  out += static_cast<char>(state_);
  out += static_cast<char>(negative_);
  out += static_cast<char>(num_digits_);
  out.append(reinterpret_cast<const char*>(&magnitude_), sizeof(magnitude_));
}

}  // namespace strata
