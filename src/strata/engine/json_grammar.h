// JsonGrammar: a byte-at-a-time recogniser of one JSON object (RFC 8259 syntax, the object
// at the top, as OpenAI's response_format json_object asks), for constrained decoding: a
// copy is a few dozen bytes (nesting up to kMaxDepth), feed() says whether a byte can extend
// a valid prefix, done() whether the object is complete.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "strata/engine/json_lexing.h"
#include "strata/engine/json_number.h"

namespace strata {

class JsonGrammar {
 public:
  static constexpr int kMaxDepth = 48;

  // False (and the state unchanged) when `c` cannot follow the bytes fed so far.
  bool feed(unsigned char c);
  bool feed(std::string_view bytes);
  // The top-level object is closed; only whitespace may follow.
  bool done() const { return mode_ == Mode::kDone; }
  // Equal keys: equal states (a TokenMaskCache key).
  std::string key() const;

 private:
  enum class Mode : uint8_t {
    kStart, kValue, kKeyOrEnd, kKey, kColon, kCommaOrEnd, kString, kNumber, kLiteral, kDone,
  };
  template <typename R> friend bool json_lexing::feed_all(R&, std::string_view);
  bool step(unsigned char c);
  bool start_value(unsigned char c);
  bool end_value();  // a value closed: what the enclosing container expects next
  bool number(unsigned char c);

  Mode mode_ = Mode::kStart;
  BoundedNumber num_;  // digit counts bounded, values not
  bool string_is_key_ = false;
  json_lexing::StringBody string_;
  std::string_view literal_left_;  // the rest of true / false / null
  std::array<char, kMaxDepth> stack_{};  // open containers: '{' or '['
  uint8_t depth_ = 0;
};

}  // namespace strata
