#include "strata/engine/speculative_config.h"

#include <nlohmann/json.hpp>

#include "strata/core/error.h"

namespace strata {
namespace {

int32_t int_field(const nlohmann::json& config, const char* key, int32_t fallback, int32_t lo, int32_t hi) {
  if (!config.contains(key)) return fallback;
  const nlohmann::json& v = config[key];
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    fail("--speculative-config: '{}' must be an integer in [{}, {}], got {}", key, lo, hi, v.dump());
  return v.get<int32_t>();
}

}  // namespace

NgramOptions parse_speculative_config(std::string_view json) {
  const nlohmann::json config = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object())
    fail("--speculative-config must be a JSON object, e.g. "
         "'{{\"method\": \"ngram\", \"num_speculative_tokens\": 3}}'");
  for (const auto& [key, value] : config.items())
    if (key != "method" && key != "num_speculative_tokens" && key != "prompt_lookup_max" && key != "prompt_lookup_min")
      fail("--speculative-config: unknown key '{}'; supported: method, num_speculative_tokens, prompt_lookup_max, "
           "prompt_lookup_min", key);
  const std::string method = config.value("method", std::string("ngram"));
  if (method != "ngram")
    fail("--speculative-config: method '{}' is not supported; supported: ngram (prompt lookup, no draft model)", method);
  if (!config.contains("num_speculative_tokens")) fail("--speculative-config needs num_speculative_tokens");
  NgramOptions options;
  options.num_speculative_tokens = int_field(config, "num_speculative_tokens", 0, 1, 15);
  options.prompt_lookup_max = int_field(config, "prompt_lookup_max", 4, 1, 64);
  options.prompt_lookup_min = int_field(config, "prompt_lookup_min", std::min(2, options.prompt_lookup_max), 1, 64);
  if (options.prompt_lookup_min > options.prompt_lookup_max)
    fail("--speculative-config: prompt_lookup_min {} exceeds prompt_lookup_max {}", options.prompt_lookup_min,
         options.prompt_lookup_max);
  return options;
}

}  // namespace strata
