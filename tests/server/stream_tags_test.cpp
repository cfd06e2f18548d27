#include "strata/server/stream_tags.h"

#include <gtest/gtest.h>

namespace strata::server {
namespace {

constexpr std::string_view kTags[] = {"<think>", "</think>"};

TEST(StreamTags, FirstCompleteTag) {
  const TagMatch m = find_first_tag("a</think>b<think>", kTags);
  EXPECT_EQ(m.pos, 1u);
  EXPECT_EQ(m.tag, "</think>");
  EXPECT_EQ(find_first_tag("<thin", kTags).pos, std::string_view::npos);
  EXPECT_EQ(find_first_tag("anything", {}).pos, std::string_view::npos);
}

TEST(StreamTags, PartialTagAtTheEnd) {
  EXPECT_EQ(partial_tag_length("abc</thi", kTags), 5u);
  EXPECT_EQ(partial_tag_length("abc<", kTags), 1u);
  EXPECT_EQ(partial_tag_length("abc<think", kTags), 6u);
  EXPECT_EQ(partial_tag_length("abc<think>", kTags), 0u);  // whole tags are find_first_tag's
  EXPECT_EQ(partial_tag_length("</thx", kTags), 0u);
  EXPECT_EQ(partial_tag_length("", kTags), 0u);
}

}  // namespace
}  // namespace strata::server
