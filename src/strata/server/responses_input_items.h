// The input of a /v1/responses request as OpenAI lists it back (GET .../input_items): every
// item gets an id (the client's own when it sent one), a type and a status, and message text
// sent as a string becomes one input_text (assistant: output_text) part. Pages of that list
// are cut by order, limit and after, as OpenAI's cursor pagination does.
#pragma once

#include <optional>
#include <string>

#include "strata/server/json_fields.h"

namespace strata::server {

// `input`: the body's input, already read by read_responses_request (a string or valid items).
Json input_item_records(const Json& input);

struct InputItemsPage {
  bool ascending = false;  // OpenAI's default order is "desc", newest item first
  size_t limit = 20;       // 1 to 100
  std::optional<std::string> after;  // an item id: the page starts past it, in the order asked
};

// {"object": "list", "data", "first_id", "last_id", "has_more"}; a 400 naming `after` when no
// item has that id.
Json input_items_list(const Json& records, const InputItemsPage& page);

}  // namespace strata::server
