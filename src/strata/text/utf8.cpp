// Strict UTF-8 decoding after the Unicode "well-formed byte sequences" table (RFC 3629):
// no overlongs, no surrogates, nothing above U+10FFFF.
#include "strata/text/utf8.h"

namespace strata::text {
namespace {

// Valid range of the second byte for a given lead byte; later bytes are 0x80..0xBF.
bool second_byte_ok(uint8_t lead, uint8_t b) {
  switch (lead) {
    case 0xE0: return b >= 0xA0 && b <= 0xBF;
    case 0xED: return b >= 0x80 && b <= 0x9F;
    case 0xF0: return b >= 0x90 && b <= 0xBF;
    case 0xF4: return b >= 0x80 && b <= 0x8F;
    default: return b >= 0x80 && b <= 0xBF;
  }
}

size_t expected_length(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// How many bytes from pos form a valid (possibly incomplete) prefix of a sequence.
size_t valid_prefix(std::string_view text, size_t pos, size_t* needed) {
  const auto lead = static_cast<uint8_t>(text[pos]);
  *needed = expected_length(lead);
  if (*needed == 0) return 0;
  size_t n = 1;
  while (n < *needed && pos + n < text.size()) {
    const auto b = static_cast<uint8_t>(text[pos + n]);
    const bool ok = n == 1 ? second_byte_ok(lead, b) : (b >= 0x80 && b <= 0xBF);
    if (!ok) break;
    ++n;
  }
  return n;
}

}  // namespace

size_t utf8_sequence_length(std::string_view text, size_t pos, char32_t* cp) {
  if (pos >= text.size()) return 0;
  size_t needed = 0;
  const size_t n = valid_prefix(text, pos, &needed);
  if (n == 0 || n != needed) return 0;
  if (cp) {
    const auto lead = static_cast<uint8_t>(text[pos]);
    char32_t c = n == 1 ? lead : n == 2 ? (lead & 0x1F) : n == 3 ? (lead & 0x0F) : (lead & 0x07);
    for (size_t i = 1; i < n; ++i) c = (c << 6) | (static_cast<uint8_t>(text[pos + i]) & 0x3F);
    *cp = c;
  }
  return n;
}

size_t utf8_invalid_length(std::string_view text, size_t pos) {
  size_t needed = 0;
  const size_t n = valid_prefix(text, pos, &needed);
  return n == 0 ? 1 : n;
}

bool is_valid_utf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    if (static_cast<uint8_t>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const size_t n = utf8_sequence_length(text, pos);
    if (n == 0) return false;
    pos += n;
  }
  return true;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = kReplacementChar;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string utf8_lossy(std::string_view bytes) {
  if (is_valid_utf8(bytes)) return std::string(bytes);
  std::string out;
  out.reserve(bytes.size() + 8);
  for (size_t pos = 0; pos < bytes.size();) {
    const size_t n = utf8_sequence_length(bytes, pos);
    if (n > 0) {
      out.append(bytes.substr(pos, n));
      pos += n;
    } else {
      append_utf8(out, kReplacementChar);
      pos += utf8_invalid_length(bytes, pos);
    }
  }
  return out;
}

size_t incomplete_utf8_suffix(std::string_view text) {
  const size_t start = text.size() > 3 ? text.size() - 3 : 0;
  for (size_t pos = start; pos < text.size(); ++pos) {
    size_t needed = 0;
    const size_t n = valid_prefix(text, pos, &needed);
    if (n > 0 && n < needed && pos + n == text.size()) return text.size() - pos;
  }
  return 0;
}

}  // namespace strata::text
