#include "strata/model/registry.h"

#include <fmt/ranges.h>

#include <utility>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"

namespace strata {
namespace {

const std::vector<std::pair<std::string, ModelBuilder>>& registry() {
  static const std::vector<std::pair<std::string, ModelBuilder>> kRegistry = {
      {"llama", build_llama},
      {"qwen2", build_qwen2},
      {"qwen3", build_qwen3},
      {"qwen3_moe", build_qwen3_moe},
      {"mixtral", build_mixtral},
      {"qwen3_next", build_qwen3_next},
      {"qwen3_5", build_qwen3_5}, {"qwen3_5_text", build_qwen3_5},
      {"qwen3_5_moe", build_qwen3_5_moe}, {"qwen3_5_moe_text", build_qwen3_5_moe},
      {"mamba2", build_mamba2},
      {"nemotron_h", build_nemotron_h},
      {"gemma3_text", build_gemma3_text},
      {"gpt_oss", build_gpt_oss},
      {"deepseek_v3", build_deepseek_v3},
      {"deepseek_v4", build_deepseek_v4},
      {"qwen4_exp", build_qwen4_exp}, {"qwen4_exp_text", build_qwen4_exp},
      {"bert", build_bert},
      {"modernbert", build_modernbert},
  };
  return kRegistry;
}

using MtpBuilder = std::unique_ptr<Model> (*)(const Model&, const ModelWeights&);

const std::vector<std::pair<std::string, MtpBuilder>>& mtp_registry() {
  static const std::vector<std::pair<std::string, MtpBuilder>> kRegistry = {
      {"qwen3_next", build_qwen3_next_mtp},
      {"qwen3_5", build_qwen3_5_mtp}, {"qwen3_5_text", build_qwen3_5_mtp},
      {"qwen3_5_moe", build_qwen3_5_moe_mtp}, {"qwen3_5_moe_text", build_qwen3_5_moe_mtp},
  };
  return kRegistry;
}

}  // namespace

std::unique_ptr<Model> build_mtp_module(const Model& target, const ModelWeights& weights) {
  std::vector<std::string> names;
  for (const auto& [name, builder] : mtp_registry()) {
    if (name == target.config().model_type) return builder(target, weights);
    names.push_back(name);
  }
  fail("--speculative-config: method mtp needs a model with multi-token-prediction layers; model_type '{}' has "
       "none Strata runs (supported: {}); use method ngram or draft_model", target.config().model_type,
       fmt::join(names, ", "));
}

std::vector<std::string> supported_model_types() {
  std::vector<std::string> names;
  for (const auto& [name, builder] : registry()) names.push_back(name);
  return names;
}

PoolingType default_pooling_type(const std::string& model_type) {
  return model_type == "bert" || model_type == "modernbert" ? PoolingType::kCls : PoolingType::kLast;
}

std::unique_ptr<Model> build_model(const ModelConfig& config, const ModelWeights& weights) {
  for (const auto& [name, builder] : registry())
    if (name == config.model_type) return builder(config, weights);
  fail("model_type '{}' is not supported; supported: {}", config.model_type,
       fmt::join(supported_model_types(), ", "));
}

}  // namespace strata
