#include "strata/lora/lora_slot_cache.h"

#include <algorithm>
#include <utility>

#include "strata/core/error.h"

namespace strata {

LoraSlotCache::LoraSlotCache(LoraSet& set, Loaded loaded)
    : set_(set), loaded_(std::move(loaded)), ids_(static_cast<size_t>(set.num_slots()), 0), last_use_(ids_.size(), 0) {}

// An empty slot, else the least recently used one holding no adapter of `wanted`.
int32_t LoraSlotCache::free_slot(const std::vector<int64_t>& wanted) const {
  int32_t best = -1;
  for (int32_t s = 0; s < static_cast<int32_t>(ids_.size()); ++s) {
    if (ids_[s] == 0) return s;
    if (std::ranges::find(wanted, ids_[s]) != wanted.end()) continue;
    if (best < 0 || last_use_[s] < last_use_[best]) best = s;
  }
  STRATA_CHECK(best >= 0);  // the batch was checked to need no more than the slots
  return best;
}

std::vector<int32_t> LoraSlotCache::slots_for(const std::vector<std::optional<LoraRequest>>& batch) {
  std::vector<int64_t> wanted;
  for (const auto& lora : batch) {
    if (!lora) continue;
    if (lora->id < 1) fail("LoRA request '{}': lora_int_id must be at least 1, got {}", lora->name, lora->id);
    if (std::ranges::find(wanted, lora->id) == wanted.end()) wanted.push_back(lora->id);
  }
  if (wanted.size() > ids_.size())
    fail("the batch uses {} LoRA adapters, more than max_loras {}; raise max_loras or split the batch",
         wanted.size(), ids_.size());
  ++clock_;
  std::vector<int32_t> slots;
  for (const auto& lora : batch) {
    if (!lora) {
      slots.push_back(-1);
      continue;
    }
    auto held = std::ranges::find(ids_, lora->id);
    if (held == ids_.end()) {
      const int32_t slot = free_slot(wanted);
      set_.load(slot, load_lora_adapter(lora->name, lora->path));
      ids_[slot] = lora->id;
      if (loaded_) loaded_(slot, *lora);
      held = ids_.begin() + slot;
    }
    const auto slot = static_cast<int32_t>(held - ids_.begin());
    last_use_[slot] = clock_;
    slots.push_back(slot);
  }
  return slots;
}

}  // namespace strata
