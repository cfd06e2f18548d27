// The headers the API adds to its answers: x-request-id (the client's own when it sent a
// usable one, else a new one) and, for a browser origin that --allowed-origins lets in, the
// CORS headers; and the answer to a CORS preflight (OPTIONS). Without allowed origins no CORS
// header is sent and OPTIONS is refused like any method a route does not take.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/server/http/http_request.h"

namespace strata::server {

class ResponseHeaders {
 public:
  static constexpr size_t kMaxRequestIdBytes = 128;

  // `allowed_origins`: exact origins (scheme://host[:port]), or "*" for any.
  explicit ResponseHeaders(std::vector<std::string> allowed_origins);

  // x-request-id, plus the CORS headers when the request's Origin is allowed.
  http::HeaderList for_request(const http::HttpRequest& request) const;
  // A preflight (OPTIONS with Origin and Access-Control-Request-Method) while CORS is on:
  // 204 with the Access-Control-Allow-* headers for an allowed origin, else 403. nullopt
  // for any other request.
  std::optional<http::HttpResponse> preflight(const http::HttpRequest& request) const;

 private:
  // The Access-Control-Allow-Origin value for the request, when its origin is allowed.
  std::optional<std::string> allow_origin(const http::HttpRequest& request) const;

  bool any_origin_ = false;
  std::vector<std::string> origins_;
};

// The --allowed-origins value: origins separated by commas, or "*". Throws strata::Error
// naming an entry that is not an origin.
std::vector<std::string> parse_allowed_origins(std::string_view text);

}  // namespace strata::server
