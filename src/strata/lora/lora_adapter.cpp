#include "strata/lora/lora_adapter.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "strata/core/error.h"
#include "strata/ops/cpu/convert.h"
#include "strata/weights/safetensors.h"

namespace strata {
namespace {

const std::map<std::string, LoraModule>& module_names() {
  static const std::map<std::string, LoraModule> names = {
      {"self_attn.q_proj", LoraModule::kQ}, {"self_attn.k_proj", LoraModule::kK},
      {"self_attn.v_proj", LoraModule::kV}, {"self_attn.o_proj", LoraModule::kO},
      {"mlp.gate_proj", LoraModule::kGate}, {"mlp.up_proj", LoraModule::kUp}, {"mlp.down_proj", LoraModule::kDown}};
  return names;
}

nlohmann::json read_config(const std::string& folder) {
  std::ifstream in(folder + "/adapter_config.json");
  if (!in) fail("LoRA adapter '{}': cannot open adapter_config.json", folder);
  nlohmann::json config = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object()) fail("LoRA adapter '{}': adapter_config.json is not a JSON object", folder);
  auto refuse = [&](const char* key, bool bad) {
    if (bad) fail("LoRA adapter '{}': {} = {} is not supported", folder, key, config[key].dump());
  };
  refuse("peft_type", config.value("peft_type", "LORA") != "LORA");
  refuse("use_dora", config.value("use_dora", false));
  refuse("fan_in_fan_out", config.value("fan_in_fan_out", false));
  refuse("bias", config.value("bias", "none") != "none");
  for (const char* key : {"rank_pattern", "alpha_pattern"})
    refuse(key, config.contains(key) && config[key].is_object() && !config[key].empty());
  if (!config.contains("r") || !config["r"].is_number_integer() || config["r"].get<int64_t>() < 1)
    fail("LoRA adapter '{}': adapter_config.json needs a positive integer 'r'", folder);
  return config;
}

Tensor to_f32(const WeightInfo& info) {
  Tensor t = Tensor::host(DType::kF32, info.shape);
  cpu::widen_to_f32(info.data, info.dtype, info.shape.numel(), t.data_as<float>());
  return t;
}

}  // namespace

LoraAdapter load_lora_adapter(const std::string& name, const std::string& folder) {
  const nlohmann::json config = read_config(folder);
  LoraAdapter adapter{.name = name, .rank = config["r"].get<int64_t>()};
  const double alpha = config.value("lora_alpha", static_cast<double>(adapter.rank));
  adapter.scale = static_cast<float>(config.value("use_rslora", false) ? alpha / std::sqrt(adapter.rank)
                                                                        : alpha / adapter.rank);
  const SafetensorsFile file(folder + "/adapter_model.safetensors");
  static const std::regex pattern(R"(^base_model\.model\.model\.layers\.(\d+)\.(\w+\.\w+)\.lora_([AB])\.weight$)");
  for (const WeightInfo& info : file.tensors()) {
    std::smatch m;
    if (!std::regex_match(info.name, m, pattern) || !module_names().contains(m[2].str()))
      fail("LoRA adapter '{}': tensor '{}' is not a LoRA A/B of an attention or MLP projection", folder, info.name);
    LoraMatrices& target = adapter.targets[{std::stoll(m[1].str()), module_names().at(m[2].str())}];
    const bool is_a = m[3].str() == "A";
    const int64_t rank_dim = is_a ? info.shape[0] : info.shape[1];
    if (info.shape.rank != 2 || rank_dim != adapter.rank)
      fail("LoRA adapter '{}': tensor '{}' has shape {}, expected rank {} on its {} dimension", folder, info.name,
           info.shape.str(), adapter.rank, is_a ? "first" : "second");
    (is_a ? target.a : target.b) = to_f32(info);
  }
  for (const auto& [key, target] : adapter.targets)
    if (!target.a.defined() || !target.b.defined())
      fail("LoRA adapter '{}': layer {} has lora_A without lora_B or the reverse", folder, key.first);
  if (adapter.targets.empty()) fail("LoRA adapter '{}': adapter_model.safetensors holds no LoRA tensors", folder);
  return adapter;
}

}  // namespace strata
