// x-request-id and CORS: a usable client id is echoed, anything else replaced by a new one;
// allowed origins get Access-Control-Allow-Origin (Vary: Origin unless '*'); a preflight is
// 204 for an allowed origin, 403 otherwise, and not answered here while CORS is off; the
// --allowed-origins value is checked.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/server/response_headers.h"

namespace strata::server {
namespace {

http::HttpRequest request(std::string method, http::HeaderList headers) {
  return {.method = std::move(method), .target = "/v1/models", .path = "/v1/models", .headers = std::move(headers)};
}

const std::string* find(const http::HeaderList& headers, std::string_view name) {
  for (const auto& [key, value] : headers)
    if (key == name) return &value;
  return nullptr;
}

TEST(ResponseHeaders, RequestIdEchoedOrMade) {
  const ResponseHeaders headers({});
  EXPECT_EQ(*find(headers.for_request(request("GET", {{"x-request-id", "abc-123"}})), "x-request-id"), "abc-123");
  const std::string made = *find(headers.for_request(request("GET", {})), "x-request-id");
  EXPECT_EQ(made.size(), 32u);
  EXPECT_NE(made, *find(headers.for_request(request("GET", {})), "x-request-id"));
  for (const std::string& bad : {std::string("has space"), std::string(200, 'a'), std::string("\x01")})
    EXPECT_NE(*find(headers.for_request(request("GET", {{"x-request-id", bad}})), "x-request-id"), bad);
  EXPECT_EQ(find(headers.for_request(request("GET", {{"origin", "http://a"}})), "Access-Control-Allow-Origin"), nullptr);
}

TEST(ResponseHeaders, AllowedOriginsGetCors) {
  const ResponseHeaders headers({"http://a:3000", "https://b"});
  const http::HeaderList allowed = headers.for_request(request("POST", {{"origin", "https://b"}}));
  EXPECT_EQ(*find(allowed, "Access-Control-Allow-Origin"), "https://b");
  EXPECT_EQ(*find(allowed, "Vary"), "Origin");
  EXPECT_EQ(*find(allowed, "Access-Control-Expose-Headers"), "x-request-id");
  EXPECT_EQ(find(headers.for_request(request("POST", {{"origin", "https://c"}})), "Access-Control-Allow-Origin"), nullptr);
  const http::HeaderList any = ResponseHeaders({"*"}).for_request(request("GET", {{"origin", "https://c"}}));
  EXPECT_EQ(*find(any, "Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(find(any, "Vary"), nullptr);
}

TEST(ResponseHeaders, Preflight) {
  const ResponseHeaders headers({"http://a:3000"});
  const auto ok = headers.preflight(request("OPTIONS", {{"origin", "http://a:3000"},
                                                        {"access-control-request-method", "POST"},
                                                        {"access-control-request-headers", "content-type, authorization"}}));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 204);
  EXPECT_EQ(*find(ok->headers, "Access-Control-Allow-Origin"), "http://a:3000");
  EXPECT_EQ(*find(ok->headers, "Access-Control-Allow-Headers"), "content-type, authorization");
  EXPECT_NE(find(ok->headers, "Access-Control-Allow-Methods")->find("POST"), std::string::npos);
  const auto refused = headers.preflight(request("OPTIONS", {{"origin", "http://evil"},
                                                             {"access-control-request-method", "POST"}}));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403);
  EXPECT_FALSE(headers.preflight(request("OPTIONS", {{"origin", "http://a:3000"}})));  // not a preflight
  EXPECT_FALSE(headers.preflight(request("POST", {{"origin", "http://a:3000"}, {"access-control-request-method", "POST"}})));
  EXPECT_FALSE(ResponseHeaders({}).preflight(request("OPTIONS", {{"origin", "http://a:3000"},
                                                                 {"access-control-request-method", "POST"}})));
}

TEST(ResponseHeaders, ParseAllowedOrigins) {
  EXPECT_EQ(parse_allowed_origins(" http://localhost:3000 , https://x.example,,"),
            (std::vector<std::string>{"http://localhost:3000", "https://x.example"}));
  EXPECT_EQ(parse_allowed_origins("*"), (std::vector<std::string>{"*"}));
  EXPECT_TRUE(parse_allowed_origins("").empty());
  for (const char* bad : {"localhost:3000", "http://a/", "http://", "http://a b", "://a"})
    EXPECT_THROW(parse_allowed_origins(bad), Error) << bad;
}

}  // namespace
}  // namespace strata::server
