// GPT-2's byte-level alphabet: each of the 256 bytes is shown as one printable code point,
// so byte-level vocabularies store arbitrary bytes as text. Strata keeps such vocabularies
// in raw bytes internally and converts only at the edges (token strings, decode).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace strata::text {

// Raw bytes -> the byte-level token spelling ("Ġhello" for " hello").
std::string bytes_to_byte_level(std::string_view bytes);

// Byte-level spelling -> raw bytes; nullopt when a character is outside the alphabet.
std::optional<std::string> byte_level_to_bytes(std::string_view token);

}  // namespace strata::text
