// LoraSlotCache: adapters named by path, loaded on first use into a LoraSet's slots, as vLLM's
// LLM takes LoRARequest(name, int_id, path). An adapter keeps its slot while it is used; when
// every slot is taken, the least recently used one that the batch does not need is replaced.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "strata/lora/lora_set.h"

namespace strata {

struct LoraRequest {
  std::string name;
  int64_t id = 0;    // vLLM's lora_int_id: which adapter this is (at least 1)
  std::string path;  // a PEFT adapter folder
};

class LoraSlotCache {
 public:
  // Called after an adapter was loaded into a slot (the other ranks of a parallel group follow).
  using Loaded = std::function<void(int32_t slot, const LoraRequest& lora)>;

  // `set` (made with a LoraCapacity) must outlive the cache.
  explicit LoraSlotCache(LoraSet& set, Loaded loaded = {});

  // The slot of each entry (-1 for none), loading the adapters not yet held. Only while no request
  // runs. Throws strata::Error for more distinct adapters than slots, a bad id, or an adapter that
  // cannot load or fit (whose slot is left as it was).
  std::vector<int32_t> slots_for(const std::vector<std::optional<LoraRequest>>& batch);

 private:
  int32_t free_slot(const std::vector<int64_t>& wanted) const;

  LoraSet& set_;
  Loaded loaded_;
  std::vector<int64_t> ids_;        // per slot; 0: empty
  std::vector<uint64_t> last_use_;  // per slot
  uint64_t clock_ = 0;
};

}  // namespace strata
