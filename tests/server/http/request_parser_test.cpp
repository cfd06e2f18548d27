// RequestParser: framing, limits and pipelining, fed whole and byte by byte.
#include "strata/server/http/request_parser.h"

#include <gtest/gtest.h>

namespace strata::server::http {
namespace {

using State = RequestParser::State;

constexpr ParserLimits kLimits{.max_header_bytes = 1024, .max_body_bytes = 100};

// Feeds `bytes` (in pieces of `step` bytes) until the parser completes or fails.
struct Fed {
  State state;
  size_t used;
};
Fed feed_all(RequestParser& parser, std::string_view bytes, size_t step = 1 << 20) {
  size_t used = 0;
  while (used < bytes.size() && parser.state() != State::kDone && parser.state() != State::kFailed) {
    const std::string_view piece = bytes.substr(used, std::min(step, bytes.size() - used));
    const size_t n = parser.feed(piece);
    used += n;
    if (n < piece.size()) break;
  }
  return {parser.state(), used};
}

TEST(RequestParser, GetWholeAndByteByByte) {
  const std::string bytes = "GET /health?x=1 HTTP/1.1\r\nHost: a\r\nX-Thing:  v  \r\n\r\n";
  for (size_t step : {size_t{1}, size_t{7}, bytes.size()}) {
    RequestParser parser(kLimits);
    const Fed fed = feed_all(parser, bytes, step);
    ASSERT_EQ(fed.state, State::kDone) << step;
    EXPECT_EQ(fed.used, bytes.size());
    const HttpRequest r = parser.take();
    EXPECT_EQ(r.method, "GET");
    EXPECT_EQ(r.target, "/health?x=1");
    EXPECT_EQ(r.path, "/health");
    EXPECT_TRUE(r.keep_alive);
    ASSERT_NE(r.header("x-thing"), nullptr);
    EXPECT_EQ(*r.header("x-thing"), "v");
    EXPECT_EQ(parser.state(), State::kIdle);
  }
}

TEST(RequestParser, ContentLengthBody) {
  RequestParser parser(kLimits);
  const std::string bytes = "POST /v1/completions HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
  EXPECT_EQ(feed_all(parser, bytes, 3).state, State::kDone);
  EXPECT_EQ(parser.take().body, "hello");
}

TEST(RequestParser, ConflictingOrInvalidContentLengthIs400) {
  for (const char* headers : {"Content-Length: 5\r\nContent-Length: 6\r\n", "Content-Length: 5, 6\r\n",
                              "Content-Length: -1\r\n", "Content-Length: abc\r\n", "Content-Length:\r\n",
                              "Content-Length: 1e3\r\n", "Content-Length: 99999999999999999999\r\n",
                              "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"}) {
    RequestParser parser(kLimits);
    const Fed fed = feed_all(parser, std::string("POST / HTTP/1.1\r\n") + headers + "\r\nhello");
    EXPECT_EQ(fed.state, State::kFailed) << headers;
    EXPECT_EQ(parser.error().status, 400) << headers;
  }
  RequestParser same(kLimits);  // repeated equal values are one length
  EXPECT_EQ(feed_all(same, "POST / HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 5, 5\r\n\r\nhello").state,
            State::kDone);
}

TEST(RequestParser, ContentLengthOverLimitIs413BeforeTheBody) {
  RequestParser parser(kLimits);
  const std::string head = "POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n";
  const Fed fed = feed_all(parser, head + std::string(101, 'x'));
  EXPECT_EQ(fed.state, State::kFailed);
  EXPECT_EQ(parser.error().status, 413);
  EXPECT_EQ(fed.used, head.size());
}

TEST(RequestParser, ChunkedBody) {
  const std::string bytes =
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n"
      "0\r\nX-Trailer: t\r\n\r\nGET /next HTTP/1.1\r\n\r\n";
  for (size_t step : {size_t{1}, size_t{5}, bytes.size()}) {
    RequestParser parser(kLimits);
    const Fed fed = feed_all(parser, bytes, step);
    ASSERT_EQ(fed.state, State::kDone) << step;
    EXPECT_EQ(parser.take().body, "Wikipedia in\r\n\r\nchunks.");
    EXPECT_EQ(bytes.substr(fed.used), "GET /next HTTP/1.1\r\n\r\n");
  }
}

TEST(RequestParser, ChunkedOverLimitIs413AtTheSizeLine) {
  RequestParser parser(kLimits);
  const std::string start = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n32\r\n" + std::string(50, 'a') + "\r\n";
  const std::string over = "33\r\n";  // 50 + 51 > 100
  const Fed fed = feed_all(parser, start + over + std::string(51, 'b') + "\r\n0\r\n\r\n");
  EXPECT_EQ(fed.state, State::kFailed);
  EXPECT_EQ(parser.error().status, 413);
  EXPECT_EQ(fed.used, start.size() + over.size());
}

TEST(RequestParser, BadChunkingIs400) {
  for (const char* body : {"zz\r\nab\r\n0\r\n\r\n", "2\r\nabc\r\n0\r\n\r\n", "2\nab\r\n0\r\n\r\n",
                           "2\r\nab\n0\r\n\r\n", "\r\n", "fffffffffffffffff\r\n"}) {
    RequestParser parser(kLimits);
    const Fed fed = feed_all(parser, std::string("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") + body);
    EXPECT_EQ(fed.state, State::kFailed) << body;
    EXPECT_EQ(parser.error().status, 400) << body;
  }
}

TEST(RequestParser, TransferCodings) {
  RequestParser gzip(kLimits);
  feed_all(gzip, "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n");
  EXPECT_EQ(gzip.error().status, 501);
  RequestParser not_last(kLimits);
  feed_all(not_last, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n");
  EXPECT_EQ(not_last.error().status, 400);
}

TEST(RequestParser, HeadOverLimitIs431WithoutItsEnd) {
  RequestParser parser(kLimits);
  const std::string bytes = "GET / HTTP/1.1\r\nX: " + std::string(2000, 'a');
  const Fed fed = feed_all(parser, bytes, 10);
  EXPECT_EQ(fed.state, State::kFailed);
  EXPECT_EQ(parser.error().status, 431);
  EXPECT_LE(fed.used, 1100u);
}

TEST(RequestParser, MalformedHeads) {
  const std::pair<const char*, int> cases[] = {
      {"GET\r\n\r\n", 400},
      {"GET /\r\n\r\n", 400},
      {"GET / HTTP/2.0\r\n\r\n", 505},
      {"GET / FTP/1.0\r\n\r\n", 400},
      {"G@T / HTTP/1.1\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n", 400},
  };
  for (const auto& [bytes, status] : cases) {
    RequestParser parser(kLimits);
    EXPECT_EQ(feed_all(parser, bytes).state, State::kFailed) << bytes;
    EXPECT_EQ(parser.error().status, status) << bytes;
  }
}

TEST(RequestParser, PipelinedRequestsOneAtATime) {
  const std::string first = "POST /a HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi";
  const std::string second = "\r\nGET /b HTTP/1.1\r\nConnection: close\r\n\r\n";
  RequestParser parser(kLimits);
  const std::string bytes = first + second;
  const size_t used = parser.feed(bytes);
  ASSERT_EQ(parser.state(), State::kDone);
  EXPECT_EQ(used, first.size());
  EXPECT_EQ(parser.take().path, "/a");
  EXPECT_EQ(parser.feed(std::string_view(bytes).substr(used)), second.size());
  ASSERT_EQ(parser.state(), State::kDone);
  const HttpRequest b = parser.take();
  EXPECT_EQ(b.path, "/b");
  EXPECT_FALSE(b.keep_alive);
}

TEST(RequestParser, ConnectionAndExpect) {
  RequestParser old(kLimits);
  feed_all(old, "GET / HTTP/1.0\r\n\r\n");
  EXPECT_FALSE(old.take().keep_alive);
  RequestParser old_keep(kLimits);
  feed_all(old_keep, "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
  EXPECT_TRUE(old_keep.take().keep_alive);
  RequestParser expect(kLimits);
  EXPECT_EQ(feed_all(expect, "POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n").state, State::kBody);
  EXPECT_TRUE(expect.expects_continue());
}

TEST(RequestParser, NoLengthMeansNoBody) {
  RequestParser parser(kLimits);
  const std::string bytes = "POST / HTTP/1.1\r\n\r\n{\"a\": 1}";
  const Fed fed = feed_all(parser, bytes);
  EXPECT_EQ(fed.state, State::kDone);
  EXPECT_EQ(parser.take().body, "");
  EXPECT_EQ(bytes.substr(fed.used), "{\"a\": 1}");  // read as the next request's start
}

}  // namespace
}  // namespace strata::server::http
