// The input items a stored response lists: ids (kept when sent), types, statuses and text
// parts; and the pages of that list by order, limit and after.
#include "strata/server/responses_input_items.h"

#include <gtest/gtest.h>

#include "strata/server/api_error.h"

namespace strata::server {
namespace {

TEST(ResponsesInputItemsTest, RecordsOfAStringAndOfItems) {
  Json one = input_item_records("Hello");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_TRUE(one[0]["id"].get<std::string>().starts_with("msg_"));
  one[0].erase("id");
  EXPECT_EQ(one[0], Json::parse(R"({"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": "Hello"}], "status": "completed"})"));
  Json items = input_item_records(Json::parse(R"([
      {"role": "assistant", "content": "Hi."},
      {"type": "function_call", "id": "fc_mine", "call_id": "c1", "name": "f", "arguments": "{}"},
      {"type": "function_call_output", "call_id": "c1", "output": "42"},
      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "So?"}]}])"));
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[1]["id"], "fc_mine");
  EXPECT_TRUE(items[2]["id"].get<std::string>().starts_with("fco_"));
  for (Json& item : items) item.erase("id");
  EXPECT_EQ(items, Json::parse(R"([
      {"type": "message", "role": "assistant",
       "content": [{"type": "output_text", "text": "Hi.", "annotations": []}], "status": "completed"},
      {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}", "status": "completed"},
      {"type": "function_call_output", "call_id": "c1", "output": "42", "status": "completed"},
      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "So?"}], "status": "completed"}
  ])"));
}

Json ids_of(const Json& list) {
  Json ids = Json::array();
  for (const Json& item : list["data"]) ids.push_back(item["id"]);
  return ids;
}

TEST(ResponsesInputItemsTest, PagesByOrderLimitAndAfter) {
  Json records = Json::array();
  for (const char* id : {"i1", "i2", "i3", "i4", "i5"}) records.push_back({{"id", id}});
  const Json newest_first = input_items_list(records, {});
  EXPECT_EQ(ids_of(newest_first), Json::parse(R"(["i5", "i4", "i3", "i2", "i1"])"));
  EXPECT_EQ(newest_first["object"], "list");
  EXPECT_EQ(newest_first["first_id"], "i5");
  EXPECT_EQ(newest_first["last_id"], "i1");
  EXPECT_EQ(newest_first["has_more"], false);
  const Json first_two = input_items_list(records, {.ascending = true, .limit = 2});
  EXPECT_EQ(ids_of(first_two), Json::parse(R"(["i1", "i2"])"));
  EXPECT_EQ(first_two["has_more"], true);
  const Json next_two = input_items_list(records, {.ascending = true, .limit = 2, .after = "i2"});
  EXPECT_EQ(ids_of(next_two), Json::parse(R"(["i3", "i4"])"));
  EXPECT_EQ(next_two["has_more"], true);
  const Json last = input_items_list(records, {.ascending = true, .limit = 2, .after = "i4"});
  EXPECT_EQ(ids_of(last), Json::parse(R"(["i5"])"));
  EXPECT_EQ(last["has_more"], false);
  EXPECT_EQ(ids_of(input_items_list(records, {.after = "i2"})), Json::parse(R"(["i1"])"));
  const Json past_the_end = input_items_list(records, {.after = "i1"});
  EXPECT_EQ(past_the_end["data"], Json::array());
  EXPECT_TRUE(past_the_end["first_id"].is_null() && past_the_end["last_id"].is_null());
  try {
    input_items_list(records, {.after = "nope"});
    FAIL() << "an unknown after is a 400";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_STREQ(e.what(), "'after': no input item of this response has id \"nope\"");
  }
}

}  // namespace
}  // namespace strata::server
