// A JSON number read byte by byte under bounds: at most kMaxIntegerDigits digits before the
// point, kMaxFractionDigits after it and kMaxExponentDigits in the exponent (so a model
// cannot write digits forever), the sign, and the value (integers) or the integer part
// (numbers, truncated toward zero) kept within [lo, hi]: a digit is taken only when some
// completion of the digits so far lands inside, and the number may end only inside.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "strata/engine/json_lexing.h"

namespace strata {

struct NumberBounds {
  static constexpr int kMaxIntegerDigits = 16;
  static constexpr int kMaxFractionDigits = 16;
  static constexpr int kMaxExponentDigits = 3;
  static constexpr int64_t kLimit = 9'999'999'999'999'999;  // the largest 16-digit magnitude

  bool integer = false;
  int64_t lo = -kLimit, hi = kLimit;  // integers: the value; numbers: the integer part
  bool negative = true;               // a '-' may start the number
  bool non_negative = true;           // the number may start without '-'
  bool bounded() const { return lo != -kLimit || hi != kLimit || !negative || !non_negative; }
};

class BoundedNumber {
 public:
  // The first byte ('-' or a digit); false when the bounds refuse it.
  bool start(unsigned char c, const NumberBounds& b);
  // kTaken: c extends the number; kEnded: the number ended before c (which belongs to what
  // follows); kRefused: c can neither extend it nor may it end here.
  json_lexing::NumberStep step(unsigned char c, const NumberBounds& b);
  void append_key(std::string& out) const;

 private:
  bool digit_fits(unsigned char c, const NumberBounds& b) const;
  bool may_end(const NumberBounds& b) const;

  json_lexing::Number state_ = json_lexing::Number::kSign;
  bool negative_ = false;
  uint8_t num_digits_ = 0;  // in the current part: integer, fraction or exponent
  int64_t magnitude_ = 0;   // of the integer part
};

}  // namespace strata
