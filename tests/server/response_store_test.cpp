// The ResponseStore's bounds: the oldest entries go first, by count and by bytes, exactly as
// many as the new entry needs; deleted entries free their room; an entry over the byte limit
// alone is not kept.
#include "strata/server/response_store.h"

#include <gtest/gtest.h>

namespace strata::server {
namespace {

using Ids = std::vector<std::string>;

// An entry of exactly `text`.size() + 6 bytes: "\"text\"", "[]" and "[]".
StoredResponse entry(const std::string& text) {
  return {.response = Json(text), .input_items = Json::array(), .conversation = Json::array()};
}

TEST(ResponseStoreTest, EvictsTheOldestByCount) {
  ResponseStore store({.max_responses = 3, .max_bytes = 1000});
  for (const char* id : {"a", "b", "c"}) store.put(id, entry(id));
  EXPECT_EQ(store.ids_oldest_first(), (Ids{"a", "b", "c"}));
  store.put("d", entry("d"));
  EXPECT_EQ(store.ids_oldest_first(), (Ids{"b", "c", "d"}));
  store.put("e", entry("e"));
  EXPECT_EQ(store.ids_oldest_first(), (Ids{"c", "d", "e"}));
  EXPECT_FALSE(store.get("a"));
  EXPECT_FALSE(store.get("b"));
  EXPECT_EQ(store.get("e")->response, "e");
}

TEST(ResponseStoreTest, EvictsTheOldestByBytesUntilTheNewOneFits) {
  ResponseStore store({.max_responses = 10, .max_bytes = 30});
  for (const char* id : {"a", "b", "c"}) store.put(id, entry("xxxx"));  // 10 bytes each
  EXPECT_EQ(store.ids_oldest_first(), (Ids{"a", "b", "c"}));
  store.put("d", entry("yyyy"));
  EXPECT_EQ(store.ids_oldest_first(), (Ids{"b", "c", "d"}));
  store.put("big", entry("zzzzzzzzzzzzzz"));  // 20 bytes: b and c make room
  EXPECT_EQ(store.ids_oldest_first(), (Ids{"d", "big"}));
  store.put("huge", entry(std::string(25, 'h')));  // 31 bytes alone: not kept, nothing evicted
  EXPECT_EQ(store.ids_oldest_first(), (Ids{"d", "big"}));
  EXPECT_EQ(store.get("big")->response, "zzzzzzzzzzzzzz");
}

TEST(ResponseStoreTest, EraseFreesItsCountAndBytes) {
  ResponseStore store({.max_responses = 3, .max_bytes = 30});
  for (const char* id : {"a", "b", "c"}) store.put(id, entry("xxxx"));
  EXPECT_TRUE(store.erase("b"));
  EXPECT_FALSE(store.erase("b"));
  EXPECT_FALSE(store.get("b"));
  store.put("d", entry("yyyy"));  // fits in b's room: a stays
  EXPECT_EQ(store.ids_oldest_first(), (Ids{"a", "c", "d"}));
  store.put("e", entry("eeee"));
  EXPECT_EQ(store.ids_oldest_first(), (Ids{"c", "d", "e"}));
  EXPECT_EQ(store.size(), 3u);
}

TEST(ResponseStoreTest, KeepsAllThreePartsAndTheFirstOfARepeatedId) {
  ResponseStore store;
  store.put("r", {.response = {{"id", "r"}}, .input_items = Json::array({1}), .conversation = Json::array({2})});
  store.put("r", entry("second"));
  const std::optional<StoredResponse> got = store.get("r");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->response.dump(), R"({"id":"r"})");
  EXPECT_EQ(got->input_items.dump(), "[1]");
  EXPECT_EQ(got->conversation.dump(), "[2]");
  EXPECT_EQ(store.size(), 1u);
}

TEST(ResponseStoreTest, ZeroResponsesKeepsNothing) {
  ResponseStore store({.max_responses = 0, .max_bytes = 1000});
  store.put("a", entry("a"));
  EXPECT_EQ(store.size(), 0u);
}

}  // namespace
}  // namespace strata::server
