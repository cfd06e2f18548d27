#include "strata/server/stored_responses_endpoint.h"

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "strata/server/api_error.h"
#include "strata/server/openai_objects.h"
#include "strata/server/responses_input_items.h"
#include "strata/server/url_query.h"

namespace strata::server {
namespace {

constexpr size_t kMaxIdBytes = 256;  // far past "resp_" and 32 characters; kept out of messages

// "{id}" or "{id}/{action}", the id percent-decoded.
struct ResponsePath {
  std::string id;
  std::string_view action;
};

ApiError no_route(std::string_view method, std::string_view path_rest) {
  return ApiError(404, fmt::format("no route {} /v1/responses/{}", method, path_rest.substr(0, kMaxIdBytes)),
                  "invalid_request_error");
}

ResponsePath read_path(std::string_view method, std::string_view path_rest) {
  const size_t slash = path_rest.find('/');
  const std::string_view action = slash == std::string_view::npos ? std::string_view() : path_rest.substr(slash + 1);
  if (action.find('/') != std::string_view::npos) throw no_route(method, path_rest);
  std::optional<std::string> id = percent_decode(path_rest.substr(0, slash));
  if (!id || id->empty() || id->size() > kMaxIdBytes)
    throw ApiError(404, "the response id in the path is empty, too long or not percent-encoded properly",
                   "invalid_request_error");
  return {.id = std::move(*id), .action = action};
}

ApiError not_found(const std::string& id) {
  return ApiError(404, fmt::format("Response with id {} not found: it was never stored (store false), was deleted, "
                                   "or is older than the responses this server keeps", describe(Json(id))),
                  "invalid_request_error");
}

StoredResponse find(const ResponseStore& store, const std::string& id) {
  std::optional<StoredResponse> stored = store.get(id);
  if (!stored) throw not_found(id);
  return std::move(*stored);
}

// The query's pairs; a 400 naming the first parameter outside `known`.
QueryPairs read_query(std::string_view target, std::initializer_list<std::string_view> known) {
  std::optional<QueryPairs> pairs = parse_query(target);
  if (!pairs) throw bad_request("the query string has a malformed percent escape");
  for (const auto& [name, value] : *pairs)
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw bad_request(fmt::format("unknown query parameter {}", describe(Json(name.substr(0, 64)))), name.substr(0, 64));
  return std::move(*pairs);
}

// include (and include[]) names extra output; none can be added, as on create.
void refuse_include(const std::string& name) {
  if (name == "include" || name == "include[]")
    throw bad_request("'include': no extra output can be included; leave it out", "include");
}

size_t read_limit(const std::string& value) {
  int limit = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), limit);
  if (error != std::errc() || end != value.data() + value.size() || limit < 1 || limit > 100)
    throw bad_request(fmt::format("'limit' must be an integer from 1 to 100, got {}", describe(Json(value.substr(0, 32)))),
                      "limit");
  return static_cast<size_t>(limit);
}

HttpReply list_input_items(const StoredResponse& stored, std::string_view target) {
  InputItemsPage page;
  for (const auto& [name, value] : read_query(target, {"order", "limit", "after", "include", "include[]"})) {
    refuse_include(name);
    if (name == "order" && value != "asc" && value != "desc")
      throw bad_request(fmt::format("'order' must be \"asc\" or \"desc\", got {}", describe(Json(value.substr(0, 32)))),
                        "order");
    if (name == "order") page.ascending = value == "asc";
    if (name == "limit") page.limit = read_limit(value);
    if (name == "after") page.after = value;
  }
  return {.body = dump_json(input_items_list(stored.input_items, page))};
}

// stream and starting_after replay a background response's events; none are run here.
void check_retrieve_query(std::string_view target) {
  for (const auto& [name, value] :
       read_query(target, {"include", "include[]", "stream", "starting_after", "include_obfuscation"})) {
    refuse_include(name);
    if ((name == "stream" && value != "false") || name == "starting_after")
      throw bad_request(fmt::format("'{}': only background responses stream on retrieval, and 'background' is not "
                                    "supported; leave it out",
                                    name),
                        name);
  }
}

}  // namespace

HttpReply get_stored_response(const ResponseStore& store, std::string_view path_rest, std::string_view target) {
  const ResponsePath path = read_path("GET", path_rest);
  if (path.action == "input_items") return list_input_items(find(store, path.id), target);
  if (!path.action.empty()) throw no_route("GET", path_rest);
  check_retrieve_query(target);
  return {.body = dump_json(find(store, path.id).response)};
}

HttpReply delete_stored_response(ResponseStore& store, std::string_view path_rest, std::string_view target) {
  const ResponsePath path = read_path("DELETE", path_rest);
  if (!path.action.empty()) throw no_route("DELETE", path_rest);
  read_query(target, {});
  if (!store.erase(path.id)) throw not_found(path.id);
  return {.body = dump_json(Json{{"id", path.id}, {"object", "response"}, {"deleted", true}})};
}

HttpReply cancel_stored_response(const ResponseStore& store, std::string_view path_rest, std::string_view target) {
  const ResponsePath path = read_path("POST", path_rest);
  if (path.action != "cancel") throw no_route("POST", path_rest);
  read_query(target, {});
  find(store, path.id);
  throw bad_request("Only responses created with background=true can be cancelled, and 'background' is not "
                    "supported here: this response has already finished");
}

}  // namespace strata::server
