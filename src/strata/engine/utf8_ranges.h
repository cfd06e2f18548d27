// Code point ranges as UTF-8 byte patterns: [first, last] becomes a few sequences of byte
// ranges, each sequence one encoded length, so a byte-level automaton can match a class of
// code points. Surrogates are not excluded; code points stop at U+10FFFF.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

struct ByteRange {
  uint8_t first = 0, last = 0;  // inclusive
};

// The byte patterns of every code point in [first, last] (first <= last <= 0x10FFFF).
std::vector<std::vector<ByteRange>> utf8_patterns(uint32_t first, uint32_t last);

// The UTF-8 encoding of one code point.
std::string utf8_encode(uint32_t codepoint);

}  // namespace strata
