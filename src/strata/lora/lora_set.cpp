#include "strata/lora/lora_set.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "strata/core/error.h"
#include "strata/model/layers/attention.h"
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

// The rows or columns this rank's layers hold: the attention's heads (key/value heads kept by
// several ranks when there are fewer of them) and the MLP's intermediate columns.
std::pair<int64_t, int64_t> rank_range(const ModelConfig& c, LoraModule module, const TensorShard& shard) {
  switch (module) {
    case LoraModule::kK:
    case LoraModule::kV: {
      const auto [begin, end] = kv_head_range(shard, c.num_key_value_heads);
      return {begin * c.head_dim, end * c.head_dim};
    }
    case LoraModule::kQ:
    case LoraModule::kO: {
      const auto [begin, end] = shard.range(c.num_attention_heads, "num_attention_heads");
      return {begin * c.head_dim, end * c.head_dim};
    }
    default: return shard.range(c.intermediate_size, "intermediate_size");
  }
}

// host_f32 into `dst` (a view of a stack): bf16 on a GPU, as the stacks are held there.
void upload(const Tensor& dst, const Tensor& host_f32, Backend& backend) {
  if (backend.device().is_cpu()) {
    std::memcpy(dst.data(), host_f32.data(), host_f32.nbytes());
    return;
  }
  Tensor bf16 = Tensor::host(DType::kBF16, host_f32.shape());
  for (int64_t i = 0; i < host_f32.numel(); ++i) bf16.data_as<uint16_t>()[i] = f32_to_bf16(host_f32.data_as<float>()[i]);
  backend.copy(dst, bf16);  // a host -> device copy has read its source when it returns
}

Tensor zeros(Backend& backend, DType dtype, Shape shape) {
  Tensor t = backend.device().is_cpu() ? Tensor::host(dtype, shape) : backend.empty(dtype, shape);
  if (backend.device().is_cpu()) std::memset(t.data(), 0, t.nbytes());
  else backend.fill_bytes(t, 0);
  return t;
}

int64_t max_rank(const std::vector<LoraAdapter>& adapters) {
  int64_t r_max = 0;
  for (const LoraAdapter& adapter : adapters) r_max = std::max(r_max, adapter.rank);
  return r_max;
}

void check_architecture(const ModelConfig& config) {
  static const char* kSupported[] = {"llama", "qwen2", "qwen3", "gemma3_text"};
  if (std::none_of(std::begin(kSupported), std::end(kSupported), [&](const char* t) { return config.model_type == t; }))
    fail("LoRA adapters are supported on llama, qwen2, qwen3 and gemma3_text models, not '{}'", config.model_type);
}

}  // namespace

LoraSet::LoraSet(const ModelConfig& config, Backend& backend, const LoraPlacement& placement, int64_t num_slots,
                 int64_t r_max)
    : backend_(backend), num_layers_(config.num_hidden_layers), stage_(placement.stage), r_max_(r_max),
      names_(num_slots) {
  const TensorShard& shard = placement.shard;
  check_architecture(config);
  for (size_t m = 0; m < kNumLoraModules; ++m) {
    const auto module = static_cast<LoraModule>(m);
    const auto [in, out] = module_shape(config, module);
    const auto [begin, end] = rank_range(config, module, shard);
    parts_[m] = {.in = in, .out = out, .begin = begin, .end = end,
                 .splits_inputs = module == LoraModule::kO || module == LoraModule::kDown};
  }
  scales_ = zeros(backend, DType::kF32, {num_slots});
}

LoraSet::LoraSet(const std::vector<LoraAdapter>& adapters, const ModelConfig& config, Backend& backend,
                 const LoraPlacement& placement)
    : LoraSet(config, backend, placement, static_cast<int64_t>(adapters.size()), max_rank(adapters)) {
  for (const LoraAdapter& adapter : adapters) {
    if (std::ranges::count(adapters, adapter.name, &LoraAdapter::name) > 1)
      fail("two LoRA adapters are named '{}'", adapter.name);
    for (const auto& [key, m] : adapter.targets)
      if (key.first < num_layers_ && stage_.holds_layer(key.first) && !stacks_.contains(key))
        add_stack(key.first, key.second);
  }
  for (size_t s = 0; s < adapters.size(); ++s) load(static_cast<int32_t>(s), adapters[s]);
}

LoraSet::LoraSet(const LoraCapacity& capacity, const ModelConfig& config, Backend& backend,
                 const LoraPlacement& placement)
    : LoraSet(config, backend, placement, capacity.max_loras, capacity.max_lora_rank) {
  if (capacity.max_loras < 1 || capacity.max_lora_rank < 1)
    fail("max_loras ({}) and max_lora_rank ({}) must be at least 1", capacity.max_loras, capacity.max_lora_rank);
  for (int64_t layer = 0; layer < num_layers_; ++layer)
    for (size_t m = 0; m < kNumLoraModules; ++m)
      if (stage_.holds_layer(layer)) add_stack(layer, static_cast<LoraModule>(m));
}

void LoraSet::add_stack(int64_t layer, LoraModule module) {
  const Part& part = parts_[static_cast<size_t>(module)];
  const int64_t slots = num_slots();
  const DType dtype = backend_.device().is_cpu() ? DType::kF32 : DType::kBF16;
  stacks_[{layer, module}] = {zeros(backend_, dtype, {slots, r_max_, part.local_in()}),
                              zeros(backend_, dtype, {slots, part.local_out(), r_max_})};
}

std::pair<Tensor, Tensor> LoraSet::rank_part(const Part& part, const LoraMatrices* m, int64_t rank) const {
  const int64_t in = part.local_in(), out = part.local_out();
  Tensor a = Tensor::host(DType::kF32, {1, r_max_, in}), b = Tensor::host(DType::kF32, {1, out, r_max_});
  std::memset(a.data(), 0, a.nbytes());
  std::memset(b.data(), 0, b.nbytes());
  if (m == nullptr) return {a, b};
  const int64_t in_skip = part.splits_inputs ? part.begin : 0, out_skip = part.splits_inputs ? 0 : part.begin;
  for (int64_t j = 0; j < rank; ++j)  // rows 0..rank of r_max
    std::memcpy(a.data_as<float>() + j * in, m->a.data_as<float>() + j * part.in + in_skip, in * sizeof(float));
  for (int64_t o = 0; o < out; ++o)
    std::memcpy(b.data_as<float>() + o * r_max_, m->b.data_as<float>() + (o + out_skip) * rank, rank * sizeof(float));
  return {a, b};
}

void LoraSet::load(int32_t slot, const LoraAdapter& adapter) {
  STRATA_CHECK(slot >= 0 && slot < num_slots());
  if (adapter.rank > r_max_)
    fail("LoRA adapter '{}' has rank {}, more than max_lora_rank {}; raise max_lora_rank to at least {}", adapter.name,
         adapter.rank, r_max_, adapter.rank);
  for (const auto& [key, m] : adapter.targets) {
    const int64_t in = parts_[static_cast<size_t>(key.second)].in, out = parts_[static_cast<size_t>(key.second)].out;
    // Another stage's layers are checked there; this stage holds no stack for them.
    const bool missing_stack = stage_.holds_layer(key.first) && !stacks_.contains(key);
    if (key.first >= num_layers_ || m.a.dim(1) != in || m.b.dim(0) != out || missing_stack)
      fail("LoRA adapter '{}': layer {} projection {} has A {} and B {}; the model has {} layers and this "
           "projection maps {} to {}", adapter.name, key.first, static_cast<int>(key.second), m.a.shape().str(),
           m.b.shape().str(), num_layers_, in, out);
  }
  // Every stack's slot is rewritten (zero where this adapter has no target), so nothing of the
  // slot's previous adapter stays. The caller's thread may be new to the device.
  backend_.make_current();
  for (auto& [key, stack] : stacks_) {
    const auto it = adapter.targets.find(key);
    const auto [a, b] = rank_part(parts_[static_cast<size_t>(key.second)],
                                  it == adapter.targets.end() ? nullptr : &it->second, adapter.rank);
    upload(stack.a.slice_rows(slot, slot + 1), a, backend_);
    upload(stack.b.slice_rows(slot, slot + 1), b, backend_);
  }
  Tensor scale = Tensor::host(DType::kF32, {1});
  scale.data_as<float>()[0] = adapter.scale;
  if (backend_.device().is_cpu()) std::memcpy(scales_.slice_rows(slot, slot + 1).data(), scale.data(), sizeof(float));
  else backend_.copy(scales_.slice_rows(slot, slot + 1), scale);
  names_[slot] = adapter.name;
}

int32_t LoraSet::slot(const std::string& name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  return name.empty() || it == names_.end() ? -1 : static_cast<int32_t>(it - names_.begin());
}

void LoraSet::apply(int64_t layer, LoraModule module, const Tensor& x, const Tensor& y, int64_t col_offset,
                    const Tensor& token_slots) const {
  const auto it = stacks_.find({layer, module});
  if (it == stacks_.end()) return;
  ops::lora_add({.x = x, .a = it->second.a, .b = it->second.b, .scales = scales_, .token_slots = token_slots,
                 .y = y, .col_offset = col_offset});
}

uint64_t lora_cache_key(const std::string& adapter_identity) {
  return std::hash<std::string>{}("lora:" + adapter_identity) | 1;  // never the base's 0
}

}  // namespace strata
