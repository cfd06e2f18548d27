// Query strings as the routes under /v1/responses/{id} read them: decoded pairs in order,
// '+' as a blank, names without values, and malformed escapes refused.
#include "strata/server/url_query.h"

#include <gtest/gtest.h>

namespace strata::server {
namespace {

TEST(UrlQueryTest, DecodesPairsInOrder) {
  const std::optional<QueryPairs> pairs = parse_query("/v1/x?order=asc&after=msg%5F1&&q=a+b%2Bc&flag#frag=1");
  ASSERT_TRUE(pairs);
  EXPECT_EQ(*pairs, (QueryPairs{{"order", "asc"}, {"after", "msg_1"}, {"q", "a b+c"}, {"flag", ""}}));
  EXPECT_EQ(parse_query("/v1/x"), QueryPairs{});
  EXPECT_EQ(parse_query("/v1/x?"), QueryPairs{});
  EXPECT_EQ(parse_query("/v1/x?include%5B%5D=a"), (QueryPairs{{"include[]", "a"}}));
}

TEST(UrlQueryTest, RefusesMalformedEscapes) {
  EXPECT_FALSE(parse_query("/v1/x?a=%zz"));
  EXPECT_FALSE(parse_query("/v1/x?a=%4"));
  EXPECT_FALSE(parse_query("/v1/x?%=1"));
  EXPECT_EQ(percent_decode("resp%5Fab"), "resp_ab");
  EXPECT_FALSE(percent_decode("%g0"));
}

}  // namespace
}  // namespace strata::server
