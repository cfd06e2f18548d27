#include "strata/engine/speculative_config.h"

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/core/json_flag.h"

namespace strata {
namespace {

constexpr std::string_view kFlag = "--speculative-config";

int32_t int_field(const nlohmann::json& config, const char* key, int32_t fallback, int32_t lo, int32_t hi) {
  return static_cast<int32_t>(json_flag_int(kFlag, config, key, fallback, lo, hi));
}

// vLLM's rule: a "model" without a method is a draft model.
SpeculativeMethod read_method(const nlohmann::json& config) {
  const bool has_model = config.contains("model");
  if (has_model && (!config["model"].is_string() || config["model"].get<std::string>().empty()))
    fail("--speculative-config: 'model' must be the draft model's path or repo id, got {}", config["model"].dump());
  const std::string method = config.value("method", std::string(has_model ? "draft_model" : "ngram"));
  if (method == "ngram") {
    if (has_model) fail("--speculative-config: method 'ngram' takes no 'model'; drop it, or use method 'draft_model'");
    return SpeculativeMethod::kNgram;
  }
  if (method == "draft_model") {
    if (!has_model) fail("--speculative-config: method 'draft_model' needs 'model', the draft model's path or repo id");
    return SpeculativeMethod::kDraftModel;
  }
  if (method == "eagle3") {
    if (!has_model) fail("--speculative-config: method 'eagle3' needs 'model', the EAGLE-3 head's folder");
    return SpeculativeMethod::kEagle3;
  }
  if (method == "mtp" || method == "qwen3_next_mtp") {
    if (has_model) fail("--speculative-config: method '{}' reads the target checkpoint's own mtp.* layers; drop 'model'", method);
    return SpeculativeMethod::kMtp;
  }
  fail("--speculative-config: method '{}' is not supported; supported: ngram (prompt lookup), draft_model "
       "(a smaller model with the same vocabulary, given as 'model'), mtp (the checkpoint's multi-token-prediction "
       "layers; qwen3_next_mtp is the same), eagle3 (an EAGLE-3 head for the target, given as 'model')", method);
}

}  // namespace

SpeculativeOptions parse_speculative_config(std::string_view json) {
  const nlohmann::json config = parse_json_flag(kFlag, json, R"({"method": "ngram", "num_speculative_tokens": 3})");
  check_json_flag_keys(kFlag, config,
                       {"method", "model", "num_speculative_tokens", "prompt_lookup_max", "prompt_lookup_min"});
  SpeculativeOptions options;
  options.method = read_method(config);
  if (options.method == SpeculativeMethod::kDraftModel || options.method == SpeculativeMethod::kEagle3)
    options.draft_model = config["model"].get<std::string>();
  if (!config.contains("num_speculative_tokens")) fail("--speculative-config needs num_speculative_tokens");
  options.num_speculative_tokens = int_field(config, "num_speculative_tokens", 0, 1, 15);
  options.prompt_lookup_max = int_field(config, "prompt_lookup_max", 4, 1, 64);
  options.prompt_lookup_min = int_field(config, "prompt_lookup_min", std::min(2, options.prompt_lookup_max), 1, 64);
  if (options.prompt_lookup_min > options.prompt_lookup_max)
    fail("--speculative-config: prompt_lookup_min {} exceeds prompt_lookup_max {}", options.prompt_lookup_min,
         options.prompt_lookup_max);
  return options;
}

}  // namespace strata
