// Helpers the tool-call parsers share: a block up to its closing marker, and where a JSON
// object or array written by the model ends. Model output can nest deep, so parsing is
// bounded like a client's JSON.
#pragma once

#include <optional>
#include <string_view>

#include "strata/server/tool_parsers/tool_parser.h"

namespace strata::server {

std::string_view trim_blank(std::string_view s);

// `text` starts with '{' or '['. The length of that value up to its matching bracket
// (strings and escapes skipped), or npos when the text ends first.
size_t json_value_length(std::string_view text);

std::optional<nlohmann::ordered_json> parse_model_json(std::string_view text);

// The position of the first non-blank byte at or after `pos` (the size when none).
size_t skip_blank(std::string_view text, size_t pos);

// kNeedMore, or at the end kNotCalls for all of `text` (a call cut short stays content).
CallMatch need_more_or_not(std::string_view text, bool at_end);

struct Block {
  std::string_view body;  // between the opening marker and the closing one
  size_t length = 0;      // of the whole block, markers included
};
// The block that `text` opens with its first `open_size` bytes and `close` ends; nullopt
// while `close` has not come. At the end, an unclosed block runs to the end of the text.
std::optional<Block> closed_block(std::string_view text, size_t open_size, std::string_view close, bool at_end);

}  // namespace strata::server
