// Bytes as lowercase hex, for comparing encodings with msgpack-python's packb(...).hex().
#pragma once

#include <fmt/format.h>

#include <string>

namespace strata::test {

inline std::string hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

}  // namespace strata::test
