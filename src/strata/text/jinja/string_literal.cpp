// Jinja string literals decode like Python's "unicode-escape" codec: \x, \u and \U give code
// points (written as UTF-8), unknown escapes keep their backslash.
#include "strata/text/jinja/string_literal.h"

namespace strata::jinja {

void append_utf8(std::string& out, uint32_t cp) {
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
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads `num_digits` hex digits at src[p]; false if any is missing.
static bool read_hex(const std::string& src, size_t p, int num_digits, uint32_t* value) {
  *value = 0;
  for (int i = 0; i < num_digits; ++i) {
    if (p + i >= src.size() || hex_value(src[p + i]) < 0) return false;
    *value = *value * 16 + static_cast<uint32_t>(hex_value(src[p + i]));
  }
  return true;
}

static bool decode_escape(const std::string& src, size_t* p, std::string& out,
                          std::string* error) {
  const char c = src[*p];
  static const std::string kSimple = "\\'\"abfnrtv";
  static const char kSimpleOut[] = "\\'\"\a\b\f\n\r\t\v";
  if (const size_t k = kSimple.find(c); k != std::string::npos) {
    out += kSimpleOut[k];
    ++*p;
  } else if (c == '\n') {
    ++*p;  // line continuation
  } else if (c >= '0' && c <= '7') {
    uint32_t v = 0;
    for (int i = 0; i < 3 && *p < src.size() && src[*p] >= '0' && src[*p] <= '7'; ++i) {
      v = v * 8 + static_cast<uint32_t>(src[(*p)++] - '0');
    }
    append_utf8(out, v);
  } else if (c == 'x' || c == 'u' || c == 'U') {
    const int n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
    uint32_t v = 0;
    if (!read_hex(src, *p + 1, n, &v) || v > 0x10FFFF) {
      *error = std::string("bad \\") + c + " escape in a string literal";
      return false;
    }
    append_utf8(out, v);
    *p += 1 + n;
  } else {
    out += '\\';  // Python keeps unknown escapes as written
  }
  return true;
}

std::optional<std::string> read_string_literal(const std::string& src, size_t* pos,
                                               std::string* error) {
  const char quote = src[*pos];
  size_t p = *pos + 1;
  std::string out;
  while (p < src.size() && src[p] != quote) {
    if (src[p] == '\\' && p + 1 < src.size()) {
      ++p;
      if (!decode_escape(src, &p, out, error)) return std::nullopt;
    } else {
      out += src[p++];
    }
  }
  if (p >= src.size()) {
    *error = "string literal is never closed";
    return std::nullopt;
  }
  *pos = p + 1;
  return out;
}

}  // namespace strata::jinja
