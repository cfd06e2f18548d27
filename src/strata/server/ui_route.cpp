#include "strata/server/ui_route.h"

#include <string>

#include "strata/server/api_error.h"
#include "strata/server/http/response_bytes.h"
#include "strata/server/ui_assets.h"

namespace strata::server {
namespace {

// The file a path names: "/" is the page, "/ui/NAME" one of its files; nullopt otherwise.
std::optional<std::string_view> asset_name(std::string_view path) {
  if (path == "/") return "index.html";
  if (path.starts_with(kUiAssetPrefix)) return path.substr(kUiAssetPrefix.size());
  return std::nullopt;
}

// If-None-Match holds one ETag, a comma-separated list, or "*"; ours are quoted hashes.
bool etag_matches(const std::string* if_none_match, std::string_view etag) {
  if (if_none_match == nullptr) return false;
  return *if_none_match == "*" || std::string_view(*if_none_match).find(etag) != std::string_view::npos;
}

}  // namespace

std::optional<http::HttpResponse> ui_response(const http::HttpRequest& request) {
  const std::optional<std::string_view> name = asset_name(request.path);
  if (!name) return std::nullopt;
  const UiAsset* asset = find_ui_asset(*name);
  if (asset == nullptr)
    return http::error_response(ApiError(404, "no route " + request.method + " " + request.path, "invalid_request_error"));
  if (request.method != "GET" && request.method != "HEAD") {
    http::HttpResponse r = http::error_response(
        ApiError(405, "method " + request.method + " is not allowed on " + request.path, "invalid_request_error"));
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  http::HttpResponse response{.content_type = std::string(ui_content_type(asset->name)),
                              .body = std::string(asset->bytes)};
  // no-cache: the browser keeps its copy but asks each time; an unchanged file costs a 304.
  response.headers = {{"ETag", std::string(asset->etag)}, {"Cache-Control", "no-cache"},
                      {"X-Content-Type-Options", "nosniff"},
                      // The page loads nothing from elsewhere; this also blunts injected markup.
                      {"Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'"}};
  if (etag_matches(request.header("if-none-match"), asset->etag)) {
    response.status = 304;
    response.omit_body = true;
  }
  return response;
}

}  // namespace strata::server
