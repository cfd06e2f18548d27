// Finding tags in text that arrives in pieces: the earliest complete tag, and how much of
// the end could still grow into one (held back, so a client never sees half a tag).
#pragma once

#include <span>
#include <string_view>

namespace strata::server {

struct TagMatch {
  size_t pos = std::string_view::npos;  // npos: no tag
  std::string_view tag;
};

// The tag that starts first in `text`.
TagMatch find_first_tag(std::string_view text, std::span<const std::string_view> tags);

// Length of the longest suffix of `text` that is a proper prefix of one of the tags.
size_t partial_tag_length(std::string_view text, std::span<const std::string_view> tags);

}  // namespace strata::server
