#include "strata/server/response_headers.h"

#include <algorithm>
#include <cctype>

#include "strata/core/error.h"
#include "strata/server/api_error.h"
#include "strata/server/http/response_bytes.h"
#include "strata/server/random_id.h"

namespace strata::server {
namespace {

constexpr const char* kAllowedMethods = "GET, POST, DELETE, OPTIONS";
constexpr const char* kDefaultAllowedHeaders = "authorization, content-type, x-request-id";
constexpr const char* kPreflightMaxAgeSeconds = "600";

// A client's id is echoed only when it is short visible ASCII, so it cannot bend the reply.
bool usable_request_id(const std::string& id) {
  return !id.empty() && id.size() <= ResponseHeaders::kMaxRequestIdBytes &&
         std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// scheme://host[:port]: a scheme of letters, digits, '+', '-', '.'; no path, blanks or controls.
bool is_origin(std::string_view s) {
  const size_t sep = s.find("://");
  if (sep == std::string_view::npos || sep == 0 || sep + 3 == s.size()) return false;
  const std::string_view scheme = s.substr(0, sep), host = s.substr(sep + 3);
  const bool scheme_ok = std::all_of(scheme.begin(), scheme.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
  });
  const bool host_ok = std::all_of(host.begin(), host.end(), [](char c) { return c > 0x20 && c < 0x7f && c != '/'; });
  return scheme_ok && host_ok;
}

}  // namespace

ResponseHeaders::ResponseHeaders(std::vector<std::string> allowed_origins) {
  for (std::string& origin : allowed_origins) {
    if (origin == "*") any_origin_ = true;
    else origins_.push_back(std::move(origin));
  }
}

std::optional<std::string> ResponseHeaders::allow_origin(const http::HttpRequest& request) const {
  const std::string* origin = request.header("origin");
  if (origin == nullptr) return std::nullopt;
  if (any_origin_) return "*";
  if (std::find(origins_.begin(), origins_.end(), *origin) != origins_.end()) return *origin;
  return std::nullopt;
}

http::HeaderList ResponseHeaders::for_request(const http::HttpRequest& request) const {
  const std::string* id = request.header("x-request-id");
  http::HeaderList headers = {{"x-request-id", id != nullptr && usable_request_id(*id) ? *id : random_alnum(32)}};
  if (const std::optional<std::string> origin = allow_origin(request)) {
    headers.emplace_back("Access-Control-Allow-Origin", *origin);
    headers.emplace_back("Access-Control-Expose-Headers", "x-request-id");
    if (*origin != "*") headers.emplace_back("Vary", "Origin");
  }
  return headers;
}

std::optional<http::HttpResponse> ResponseHeaders::preflight(const http::HttpRequest& request) const {
  if (request.method != "OPTIONS" || (!any_origin_ && origins_.empty()) || request.header("origin") == nullptr ||
      request.header("access-control-request-method") == nullptr)
    return std::nullopt;
  const std::optional<std::string> origin = allow_origin(request);
  if (!origin)
    return http::error_response(ApiError(403, "this origin is not allowed; start the server with --allowed-origins "
                                              "listing it (or '*')",
                                         "invalid_request_error"));
  const std::string* asked = request.header("access-control-request-headers");
  http::HttpResponse response{.status = 204, .body = ""};
  response.headers = {{"Access-Control-Allow-Origin", *origin},
                      {"Access-Control-Allow-Methods", kAllowedMethods},
                      {"Access-Control-Allow-Headers", asked != nullptr ? *asked : kDefaultAllowedHeaders},
                      {"Access-Control-Max-Age", kPreflightMaxAgeSeconds}};
  if (*origin != "*") response.headers.emplace_back("Vary", "Origin");
  return response;
}

std::vector<std::string> parse_allowed_origins(std::string_view text) {
  std::vector<std::string> origins;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view entry = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (entry.empty()) continue;
    if (entry != "*" && !is_origin(entry))
      fail("--allowed-origins: '{}' is not an origin; give scheme://host[:port] without a path (e.g. "
           "http://localhost:3000), several separated by commas, or *",
           entry);
    origins.emplace_back(entry);
  }
  return origins;
}

}  // namespace strata::server
