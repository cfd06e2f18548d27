#include "strata/lora/lora_set.h"

#include <algorithm>
#include <cstring>

#include "strata/core/error.h"
#include "strata/ops/lora.h"

namespace strata {
namespace {

// (in, out) of each projection, from config.json.
std::pair<int64_t, int64_t> module_shape(const ModelConfig& c, LoraModule module) {
  const int64_t q = c.num_attention_heads * c.head_dim, kv = c.num_key_value_heads * c.head_dim;
  switch (module) {
    case LoraModule::kQ: return {c.hidden_size, q};
    case LoraModule::kK:
    case LoraModule::kV: return {c.hidden_size, kv};
    case LoraModule::kO: return {q, c.hidden_size};
    case LoraModule::kGate:
    case LoraModule::kUp: return {c.hidden_size, c.intermediate_size};
    case LoraModule::kDown: return {c.intermediate_size, c.hidden_size};
  }
  return {0, 0};
}

Tensor to_backend(const Tensor& host_f32, Backend& backend) {
  if (backend.device().is_cpu()) return host_f32;
  Tensor bf16 = Tensor::host(DType::kBF16, host_f32.shape());
  for (int64_t i = 0; i < host_f32.numel(); ++i) bf16.data_as<uint16_t>()[i] = f32_to_bf16(host_f32.data_as<float>()[i]);
  return backend.from_host(bf16);
}

}  // namespace

LoraSet::LoraSet(const std::vector<LoraAdapter>& adapters, const ModelConfig& config, Backend& backend) {
  static const char* kSupported[] = {"llama", "qwen2", "qwen3", "gemma3_text"};
  if (std::none_of(std::begin(kSupported), std::end(kSupported), [&](const char* t) { return config.model_type == t; }))
    fail("LoRA adapters are supported on llama, qwen2, qwen3 and gemma3_text models, not '{}'", config.model_type);
  const int64_t slots = static_cast<int64_t>(adapters.size());
  int64_t r_max = 0;
  for (const LoraAdapter& adapter : adapters) {
    if (slot(adapter.name) >= 0) fail("two LoRA adapters are named '{}'", adapter.name);
    names_.push_back(adapter.name);
    r_max = std::max(r_max, adapter.rank);
  }
  std::map<std::pair<int64_t, LoraModule>, std::pair<Tensor, Tensor>> host;  // zero-padded stacks
  for (int64_t s = 0; s < slots; ++s)
    for (const auto& [key, m] : adapters[s].targets) {
      const auto [in, out] = module_shape(config, key.second);
      if (key.first >= config.num_hidden_layers || m.a.dim(1) != in || m.b.dim(0) != out)
        fail("LoRA adapter '{}': layer {} projection {} has A {} and B {}; the model has {} layers and this "
             "projection maps {} to {}", adapters[s].name, key.first, static_cast<int>(key.second), m.a.shape().str(),
             m.b.shape().str(), config.num_hidden_layers, in, out);
      auto& [a, b] = host[key];
      if (!a.defined()) {
        a = Tensor::host(DType::kF32, {slots, r_max, in});
        b = Tensor::host(DType::kF32, {slots, out, r_max});
        std::memset(a.data(), 0, a.nbytes());
        std::memset(b.data(), 0, b.nbytes());
      }
      const int64_t r = adapters[s].rank;
      std::memcpy(a.data_as<float>() + s * r_max * in, m.a.data(), m.a.nbytes());  // rows 0..r of r_max
      for (int64_t o = 0; o < out; ++o)
        std::memcpy(b.data_as<float>() + (s * out + o) * r_max, m.b.data_as<float>() + o * r, r * sizeof(float));
    }
  for (auto& [key, ab] : host) stacks_[key] = {to_backend(ab.first, backend), to_backend(ab.second, backend)};
  Tensor scales = Tensor::host(DType::kF32, {slots});
  for (int64_t s = 0; s < slots; ++s) scales.data_as<float>()[s] = adapters[s].scale;
  scales_ = backend.device().is_cpu() ? scales : backend.from_host(scales);
}

int32_t LoraSet::slot(const std::string& name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  return it == names_.end() ? -1 : static_cast<int32_t>(it - names_.begin());
}

void LoraSet::apply(int64_t layer, LoraModule module, const Tensor& x, const Tensor& y, int64_t col_offset,
                    const Tensor& token_slots) const {
  const auto it = stacks_.find({layer, module});
  if (it == stacks_.end()) return;
  ops::lora_add({.x = x, .a = it->second.a, .b = it->second.b, .scales = scales_, .token_slots = token_slots,
                 .y = y, .col_offset = col_offset});
}

}  // namespace strata
