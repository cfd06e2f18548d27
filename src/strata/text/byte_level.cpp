// The table is GPT-2's bytes_to_unicode(): printable Latin-1 bytes map to themselves, the
// other 68 bytes to U+0100.. in byte order.
#include "strata/text/byte_level.h"

#include <array>
#include <unordered_map>

#include "strata/text/utf8.h"

namespace strata::text {
namespace {

struct ByteLevelTables {
  std::array<char32_t, 256> byte_to_cp{};
  std::unordered_map<char32_t, uint8_t> cp_to_byte;
  ByteLevelTables() {
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      byte_to_cp[b] = printable ? static_cast<char32_t>(b) : next++;
      cp_to_byte[byte_to_cp[b]] = static_cast<uint8_t>(b);
    }
  }
};

const ByteLevelTables& tables() {
  static const ByteLevelTables t;
  return t;
}

}  // namespace

std::string bytes_to_byte_level(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) append_utf8(out, tables().byte_to_cp[static_cast<uint8_t>(c)]);
  return out;
}

std::optional<std::string> byte_level_to_bytes(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (size_t pos = 0; pos < token.size();) {
    char32_t cp = 0;
    const size_t n = utf8_sequence_length(token, pos, &cp);
    if (n == 0) return std::nullopt;
    const auto it = tables().cp_to_byte.find(cp);
    if (it == tables().cp_to_byte.end()) return std::nullopt;
    out.push_back(static_cast<char>(it->second));
    pos += n;
  }
  return out;
}

}  // namespace strata::text
