#include "strata/bench/sse_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::bench {
namespace {

std::vector<std::string> feed_in_pieces(const std::string& body, size_t piece) {
  SseReader reader;
  std::vector<std::string> events;
  for (size_t i = 0; i < body.size(); i += piece)
    reader.feed(std::string_view(body).substr(i, piece), [&](std::string_view data) { events.emplace_back(data); });
  return events;
}

TEST(SseReader, EventsSplitAnywhereComeOutWhole) {
  const std::string body = "data: {\"a\": 1}\n\ndata: {\"b\": 2}\r\n\r\n: a comment\n\ndata:[DONE]\n\n";
  const std::vector<std::string> expected = {"{\"a\": 1}", "{\"b\": 2}", "[DONE]"};
  for (size_t piece : {1u, 3u, 7u, 1000u}) EXPECT_EQ(feed_in_pieces(body, piece), expected) << piece;
}

TEST(SseReader, MultiLineDataJoinsWithNewlinesAndAnOpenEventWaits) {
  EXPECT_EQ(feed_in_pieces("data: one\ndata: two\n\n", 4), std::vector<std::string>{"one\ntwo"});
  EXPECT_TRUE(feed_in_pieces("data: not ended\n", 100).empty());
}

}  // namespace
}  // namespace strata::bench
