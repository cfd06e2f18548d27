// A PEFT LoRA adapter folder (adapter_config.json + adapter_model.safetensors) read into
// host f32 matrices per (layer, projection): the low-rank A [r, in] and B [out, r] whose
// product, times lora_alpha / r, is added to that projection's output.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "strata/core/tensor.h"

namespace strata {

enum class LoraModule : uint8_t { kQ, kK, kV, kO, kGate, kUp, kDown };
inline constexpr size_t kNumLoraModules = 7;

struct LoraMatrices {
  Tensor a;  // [r, in] f32 host
  Tensor b;  // [out, r] f32 host
};

struct LoraAdapter {
  std::string name;
  int64_t rank = 0;
  float scale = 1.0f;  // lora_alpha / r, or lora_alpha / sqrt(r) with use_rslora
  std::map<std::pair<int64_t, LoraModule>, LoraMatrices> targets;  // (layer, module)
};

// Throws strata::Error naming the folder, file or tensor for anything it cannot apply
// exactly (DoRA, biases, per-module rank or alpha patterns, modules other than the
// attention and MLP projections).
LoraAdapter load_lora_adapter(const std::string& name, const std::string& folder);

}  // namespace strata
