// The chat page's routes: GET (or HEAD) / is index.html, /ui/NAME each other embedded file.
// Answered on the event loop without the API key (the page holds no secret; the /v1 calls
// it makes need the key like any client's), revalidated by ETag (304 on a match).
#pragma once

#include <optional>

#include "strata/server/http/http_request.h"

namespace strata::server {

inline constexpr std::string_view kUiAssetPrefix = "/ui/";

// The answer to a request for the page or one of its files; nullopt for any other path.
std::optional<http::HttpResponse> ui_response(const http::HttpRequest& request);

}  // namespace strata::server
