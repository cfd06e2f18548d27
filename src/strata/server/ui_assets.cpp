#include "strata/server/ui_assets.h"

namespace strata::server {

const UiAsset* find_ui_asset(std::string_view name) {
  for (const UiAsset& asset : ui_assets())
    if (asset.name == name) return &asset;
  return nullptr;
}

std::string_view ui_content_type(std::string_view name) {
  struct Type {
    std::string_view extension;
    std::string_view content_type;
  };
  constexpr Type kTypes[] = {
      {".html", "text/html; charset=utf-8"},     {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},       {".svg", "image/svg+xml"},
      {".json", "application/json"},             {".png", "image/png"},
      {".ico", "image/x-icon"},
  };
  for (const Type& type : kTypes)
    if (name.ends_with(type.extension)) return type.content_type;
  return "application/octet-stream";
}

}  // namespace strata::server
