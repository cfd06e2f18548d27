#include "strata/server/json_fields.h"

#include <fmt/format.h>

#include "strata/server/api_error.h"
#include "strata/server/json_parse.h"

namespace strata::server {

Json parse_body(const std::string& text) {
  ParsedJson parsed = parse_json(text, kMaxJsonNesting);
  if (parsed.too_deep)
    throw bad_request(fmt::format("the request body's {}; flatten it", parsed.error));
  if (!parsed.value) {
    constexpr size_t kMaxDetail = 200;  // the parser quotes the token it stopped in, which may be huge
    throw bad_request(fmt::format("the request body is not valid JSON: {}{}", parsed.error.substr(0, kMaxDetail),
                                  parsed.error.size() > kMaxDetail ? "..." : ""));
  }
  if (!parsed.value->is_object()) throw bad_request("the request body must be a JSON object");
  return std::move(*parsed.value);
}

std::string describe(const Json& value) {
  constexpr size_t kMaxChars = 40;
  const auto dump_json = [](const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); };
  if (value.is_array()) return fmt::format("an array of {} items", value.size());
  if (value.is_object()) return fmt::format("an object of {} keys", value.size());
  if (value.is_string() && value.get_ref<const std::string&>().size() > kMaxChars)
    return dump_json(Json(value.get_ref<const std::string&>().substr(0, kMaxChars))) + " (cut short)";
  return dump_json(value);
}

const Json* find_field(const Json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<double> read_number(const Json& body, const char* name, double lo, double hi) {
  const Json* v = find_field(body, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) throw bad_request(fmt::format("'{}' must be a number, got {}", name, describe(*v)), name);
  const double x = v->get<double>();
  if (!(x >= lo && x <= hi))
    throw bad_request(fmt::format("'{}' must be in [{}, {}], got {}", name, lo, hi, x), name);
  return x;
}

std::optional<int64_t> read_int(const Json& body, const char* name, int64_t lo, int64_t hi) {
  const Json* v = find_field(body, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number_integer())
    throw bad_request(fmt::format("'{}' must be an integer, got {}", name, describe(*v)), name);
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    throw bad_request(fmt::format("'{}' must be at most {}, got {}", name, hi, describe(*v)), name);
  const int64_t x = v->get<int64_t>();
  if (x < lo || x > hi) throw bad_request(fmt::format("'{}' must be in [{}, {}], got {}", name, lo, hi, x), name);
  return x;
}

std::optional<bool> read_bool(const Json& body, const char* name) {
  const Json* v = find_field(body, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) throw bad_request(fmt::format("'{}' must be true or false, got {}", name, describe(*v)), name);
  return v->get<bool>();
}

std::optional<std::string> read_string(const Json& body, const char* name) {
  const Json* v = find_field(body, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) throw bad_request(fmt::format("'{}' must be a string, got {}", name, describe(*v)), name);
  return v->get<std::string>();
}

std::vector<int32_t> read_token_ids(const Json& value, const std::string& name, int64_t vocab_size) {
  if (!value.is_array()) throw bad_request(fmt::format("'{}' must be an array of token ids", name), name);
  std::vector<int32_t> ids;
  ids.reserve(value.size());
  for (const Json& t : value) {
    if (!t.is_number_integer() || (t.is_number_unsigned() && t.get<uint64_t>() > INT32_MAX) ||
        t.get<int64_t>() < 0 || t.get<int64_t>() >= vocab_size)
      throw bad_request(fmt::format("'{}': token id {} is not an integer in [0, {})", name, describe(t), vocab_size),
                        name);
    ids.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  return ids;
}

}  // namespace strata::server
