// The chat page's routes without a socket: which paths they take, each embedded file's
// Content-Type and ETag, 304 on a matching If-None-Match, 404 and 405, and the bytes of a
// 304 or HEAD answer (the whole answer's Content-Length, no body).
#include <gtest/gtest.h>

#include <set>

#include "strata/server/http/response_bytes.h"
#include "strata/server/ui_assets.h"
#include "strata/server/ui_route.h"

namespace strata::server {
namespace {

http::HttpRequest request(std::string method, std::string path, http::HeaderList headers = {}) {
  return {.method = std::move(method), .target = path, .path = path, .headers = std::move(headers)};
}

std::string header(const http::HttpResponse& r, std::string_view name) {
  for (const auto& [key, value] : r.headers)
    if (key == name) return value;
  return "";
}

TEST(UiRoute, EmbedsThePageFiles) {
  std::set<std::string> names;
  for (const UiAsset& asset : ui_assets()) {
    names.insert(std::string(asset.name));
    EXPECT_FALSE(asset.bytes.empty()) << asset.name;
    EXPECT_EQ(asset.etag.size(), 18u) << asset.name;  // 16 hex digits in quotes
  }
  EXPECT_EQ(names, (std::set<std::string>{"api.js", "attachments.js", "chat.js", "favicon.svg", "index.html",
                                          "markdown.js", "message_view.js", "sse.js", "store.js", "style.css"}));
}

TEST(UiRoute, ContentTypes) {
  EXPECT_EQ(ui_content_type("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(ui_content_type("chat.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(ui_content_type("style.css"), "text/css; charset=utf-8");
  EXPECT_EQ(ui_content_type("favicon.svg"), "image/svg+xml");
  EXPECT_EQ(ui_content_type("notes.txt"), "application/octet-stream");
}

TEST(UiRoute, TakesOnlyTheRootAndUiPaths) {
  EXPECT_FALSE(ui_response(request("GET", "/v1/models")));
  EXPECT_FALSE(ui_response(request("GET", "/index.html")));
  EXPECT_FALSE(ui_response(request("GET", "/uix/chat.js")));
  const auto page = ui_response(request("GET", "/"));
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->content_type, "text/html; charset=utf-8");
  EXPECT_EQ(page->body, find_ui_asset("index.html")->bytes);
  EXPECT_EQ(header(*page, "ETag"), find_ui_asset("index.html")->etag);
  EXPECT_EQ(header(*page, "Cache-Control"), "no-cache");
}

TEST(UiRoute, NotFoundAndWrongMethod) {
  for (const char* path : {"/ui/", "/ui/missing.js", "/ui/../index.html", "/ui/chat.js/"})
    EXPECT_EQ(ui_response(request("GET", path))->status, 404) << path;
  const auto post = ui_response(request("POST", "/ui/chat.js"));
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(header(*post, "Allow"), "GET, HEAD");
  EXPECT_EQ(ui_response(request("HEAD", "/ui/chat.js"))->status, 200);
}

TEST(UiRoute, MatchingETagIs304WithoutABody) {
  const std::string etag(find_ui_asset("style.css")->etag);
  const auto fresh = ui_response(request("GET", "/ui/style.css", {{"if-none-match", etag}}));
  EXPECT_EQ(fresh->status, 304);
  EXPECT_TRUE(fresh->omit_body);
  for (const std::string& other : {std::string("\"0000000000000000\""), std::string("W/\"x\", \"y\"")})
    EXPECT_EQ(ui_response(request("GET", "/ui/style.css", {{"if-none-match", other}}))->status, 200) << other;
  EXPECT_EQ(ui_response(request("GET", "/ui/style.css", {{"if-none-match", "\"a\", " + etag}}))->status, 304);
  EXPECT_EQ(ui_response(request("GET", "/ui/style.css", {{"if-none-match", "*"}}))->status, 304);
}

TEST(UiRoute, OmittedBodyKeepsItsContentLength) {
  http::HttpResponse r{.content_type = "text/css; charset=utf-8", .body = "body{}", .omit_body = true};
  r.status = 304;
  EXPECT_EQ(http::response_bytes(r, true),
            "HTTP/1.1 304 Not Modified\r\nContent-Type: text/css; charset=utf-8\r\nContent-Length: 6\r\n"
            "Connection: keep-alive\r\n\r\n");
}

}  // namespace
}  // namespace strata::server
