#include "strata/server/stream_tags.h"

#include <algorithm>

namespace strata::server {

TagMatch find_first_tag(std::string_view text, std::span<const std::string_view> tags) {
  TagMatch best;
  for (std::string_view tag : tags) {
    const size_t pos = text.find(tag);
    if (pos < best.pos) best = {pos, tag};
  }
  return best;
}

size_t partial_tag_length(std::string_view text, std::span<const std::string_view> tags) {
  size_t longest = 0;
  for (std::string_view tag : tags)
    for (size_t len = std::min(text.size(), tag.size() - 1); len > longest; --len)
      if (text.ends_with(tag.substr(0, len))) {
        longest = len;
        break;
      }
  return longest;
}

}  // namespace strata::server
