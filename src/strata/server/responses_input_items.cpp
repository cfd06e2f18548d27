#include "strata/server/responses_input_items.h"

#include <fmt/format.h>

#include "strata/server/api_error.h"
#include "strata/server/random_id.h"

namespace strata::server {
namespace {

const char* id_prefix(const std::string& type) {
  if (type == "function_call") return "fc_";
  if (type == "function_call_output") return "fco_";
  if (type == "reasoning") return "rs_";
  return "msg_";
}

Json text_part(const std::string& role, const Json& text) {
  if (role == "assistant") return {{"type", "output_text"}, {"text", text}, {"annotations", Json::array()}};
  return {{"type", "input_text"}, {"text", text}};
}

// {"id", "type", the item's other fields as sent, "status"}.
Json record_of(const Json& item) {
  const Json* sent_type = find_field(item, "type");
  const std::string type = sent_type != nullptr ? sent_type->get<std::string>() : "message";
  const Json* sent_id = find_field(item, "id");
  const bool has_id = sent_id != nullptr && sent_id->is_string();
  Json record = {{"id", has_id ? *sent_id : Json(id_prefix(type) + random_alnum(24))}, {"type", type}};
  for (const auto& [key, value] : item.items())
    if (key != "id" && key != "type" && key != "status") record[key] = value;
  const Json* status = find_field(item, "status");
  record["status"] = status != nullptr ? *status : Json("completed");
  if (type == "message" && record["content"].is_null()) record["content"] = "";  // absent or null: empty
  if (type == "message" && record["content"].is_string())
    record["content"] = Json::array({text_part(record["role"].get<std::string>(), record["content"])});
  return record;
}

}  // namespace

Json input_item_records(const Json& input) {
  if (input.is_string()) return Json::array({record_of({{"role", "user"}, {"content", input}})});
  Json records = Json::array();
  for (const Json& item : input) records.push_back(record_of(item));
  return records;
}

Json input_items_list(const Json& records, const InputItemsPage& page) {
  const auto num_records = static_cast<int64_t>(records.size());
  const auto at = [&](int64_t i) -> const Json& { return records[page.ascending ? i : num_records - 1 - i]; };
  int64_t start = 0;
  if (page.after) {
    while (start < num_records && at(start)["id"] != *page.after) ++start;
    if (start == num_records)
      throw bad_request(fmt::format("'after': no input item of this response has id {}", describe(Json(*page.after))),
                        "after");
    ++start;
  }
  Json data = Json::array();
  for (int64_t i = start; i < num_records && data.size() < page.limit; ++i) data.push_back(at(i));
  const bool has_more = start + static_cast<int64_t>(data.size()) < num_records;
  Json first_id = data.empty() ? Json(nullptr) : data.front()["id"];
  Json last_id = data.empty() ? Json(nullptr) : data.back()["id"];
  return {{"object", "list"}, {"data", std::move(data)}, {"first_id", std::move(first_id)},
          {"last_id", std::move(last_id)}, {"has_more", has_more}};
}

}  // namespace strata::server
