// The chat page's files (src/strata/server/ui/), embedded at build time by
// cmake/embed_ui.cmake: each with its bytes and an ETag that changes whenever they do.
#pragma once

#include <span>
#include <string_view>

namespace strata::server {

struct UiAsset {
  std::string_view name;   // file name, e.g. "chat.js"
  std::string_view etag;   // quoted, e.g. "\"1f0c...\"": a hash of the bytes
  std::string_view bytes;
};

// Every embedded file, sorted by name (defined in the generated source).
std::span<const UiAsset> ui_assets();
// The asset of that file name, or nullptr.
const UiAsset* find_ui_asset(std::string_view name);
// The Content-Type of a file by its extension (octet-stream for one the page does not use).
std::string_view ui_content_type(std::string_view name);

}  // namespace strata::server
