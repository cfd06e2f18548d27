// UTF-8 helpers for the tokenizer: strict decoding (never reads past the end), encoding,
// and lossy repair that replaces each maximal ill-formed subpart with U+FFFD, the way
// Rust's String::from_utf8_lossy (and so Hugging Face tokenizers) does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata::text {

inline constexpr char32_t kReplacementChar = 0xFFFD;

// Length of the well-formed UTF-8 sequence starting at text[pos], or 0 when the bytes
// there are ill-formed or truncated. On success *cp receives the code point.
size_t utf8_sequence_length(std::string_view text, size_t pos, char32_t* cp = nullptr);

// Length of the maximal ill-formed subpart starting at text[pos] (>= 1); call only where
// utf8_sequence_length returned 0.
size_t utf8_invalid_length(std::string_view text, size_t pos);

bool is_valid_utf8(std::string_view text);
void append_utf8(std::string& out, char32_t cp);
std::string utf8_lossy(std::string_view bytes);

// Number of trailing bytes of `text` that start a well-formed but incomplete sequence
// (0..3): a streaming decoder holds these back until the rest arrives.
size_t incomplete_utf8_suffix(std::string_view text);

}  // namespace strata::text
