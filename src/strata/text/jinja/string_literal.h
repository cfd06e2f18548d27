// Decodes a quoted Jinja string literal with Python's escapes (\n, \t, \xhh, \uXXXX, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace strata::jinja {

// `*pos` is at the opening quote; on success it moves past the closing quote.
// On failure returns nullopt and sets `*error`.
std::optional<std::string> read_string_literal(const std::string& src, size_t* pos,
                                               std::string* error);

void append_utf8(std::string& out, uint32_t code_point);

}  // namespace strata::jinja
