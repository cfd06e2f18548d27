#include "strata/engine/utf8_ranges.h"

#include <array>

namespace strata {
namespace {

constexpr std::array<uint32_t, 4> kLastOfLength = {0x7F, 0x7FF, 0xFFFF, 0x10FFFF};
constexpr std::array<uint8_t, 4> kLeadBase = {0x00, 0xC0, 0xE0, 0xF0};

using Pattern = std::vector<ByteRange>;

// Values lo..hi written as `num_digits` base-64 digits (the first digit added to
// `first_base`, the others to 0x80) after `prefix`: split where a digit's range stops
// being full, so each pattern is a product of byte ranges.
void split(Pattern prefix, uint32_t lo, uint32_t hi, int num_digits, uint8_t first_base, std::vector<Pattern>& out) {
  if (num_digits == 0) {
    out.push_back(std::move(prefix));
    return;
  }
  const int shift = 6 * (num_digits - 1);
  const uint32_t low_mask = (uint32_t{1} << shift) - 1;
  const auto with = [&](uint32_t a, uint32_t b) {
    Pattern p = prefix;
    p.push_back({static_cast<uint8_t>(first_base + a), static_cast<uint8_t>(first_base + b)});
    return p;
  };
  if ((lo >> shift) == (hi >> shift)) {
    split(with(lo >> shift, lo >> shift), lo & low_mask, hi & low_mask, num_digits - 1, 0x80, out);
    return;
  }
  if ((lo & low_mask) != 0) {
    split(with(lo >> shift, lo >> shift), lo & low_mask, low_mask, num_digits - 1, 0x80, out);
    lo = ((lo >> shift) + 1) << shift;
  }
  const bool tail = (hi & low_mask) != low_mask;
  const uint32_t middle_hi = tail ? ((hi >> shift) << shift) - 1 : hi;
  if (lo <= middle_hi) {
    Pattern p = with(lo >> shift, middle_hi >> shift);
    for (int d = 1; d < num_digits; ++d) p.push_back({0x80, 0xBF});
    out.push_back(std::move(p));
  }
  if (tail) split(with(hi >> shift, hi >> shift), 0, hi & low_mask, num_digits - 1, 0x80, out);
}

}  // namespace

std::vector<std::vector<ByteRange>> utf8_patterns(uint32_t first, uint32_t last) {
  std::vector<Pattern> out;
  uint32_t length_first = 0;
  for (size_t n = 0; n < kLastOfLength.size(); ++n) {
    const uint32_t lo = std::max(first, length_first), hi = std::min(last, kLastOfLength[n]);
    length_first = kLastOfLength[n] + 1;
    if (lo > hi) continue;
    split({}, lo, hi, static_cast<int>(n) + 1, kLeadBase[n], out);
  }
  return out;
}

std::string utf8_encode(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

}  // namespace strata
