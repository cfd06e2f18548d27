// The JSON object of a vLLM-style --*-config flag (--speculative-config, --kv-events-config):
// parsed, its keys checked against those the flag takes, integer fields read with bounds;
// every failure an Error naming the flag and the key.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

#include <nlohmann/json.hpp>

namespace strata {

// `text` as a JSON object; else an Error showing `example`.
nlohmann::json parse_json_flag(std::string_view flag, std::string_view text, std::string_view example);
// An Error naming the first key of `object` that is not among `keys`, and listing them.
void check_json_flag_keys(std::string_view flag, const nlohmann::json& object,
                          std::initializer_list<std::string_view> keys);
// object[key] as an integer in [lo, hi]; `fallback` when the key is absent.
int64_t json_flag_int(std::string_view flag, const nlohmann::json& object, const char* key, int64_t fallback,
                      int64_t lo, int64_t hi);

}  // namespace strata
