#include "strata/core/json_flag.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "strata/core/error.h"

namespace strata {

nlohmann::json parse_json_flag(std::string_view flag, std::string_view text, std::string_view example) {
  nlohmann::json object = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object()) fail("{} must be a JSON object, e.g. '{}'", flag, example);
  return object;
}

void check_json_flag_keys(std::string_view flag, const nlohmann::json& object,
                          std::initializer_list<std::string_view> keys) {
  for (const auto& [key, value] : object.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      fail("{}: unknown key '{}'; supported: {}", flag, key, fmt::join(keys, ", "));
}

int64_t json_flag_int(std::string_view flag, const nlohmann::json& object, const char* key, int64_t fallback,
                      int64_t lo, int64_t hi) {
  if (!object.contains(key)) return fallback;
  const nlohmann::json& v = object[key];
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    fail("{}: '{}' must be an integer in [{}, {}], got {}", flag, key, lo, hi, v.dump());
  return v.get<int64_t>();
}

}  // namespace strata
