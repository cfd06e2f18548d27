// LoraSet: the adapters a server was started with, stacked per (layer, projection) in the
// backend's memory ([slots, r_max, in] A and [slots, out, r_max] B, zero where an adapter
// has a smaller rank or skips that projection), so one ops::lora_add per projection serves
// a batch whose rows use different adapters. Slot i is adapters[i]; -1 is the base model.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/core/model_config.h"
#include "strata/lora/lora_adapter.h"
#include "strata/model/forward_context.h"

namespace strata {

class LoraSet {
 public:
  // Throws strata::Error when an adapter does not fit the model (architecture, layer, shape).
  LoraSet(const std::vector<LoraAdapter>& adapters, const ModelConfig& config, Backend& backend);

  int32_t num_slots() const { return static_cast<int32_t>(names_.size()); }
  // The slot of the adapter named `name`, or -1.
  int32_t slot(const std::string& name) const;
  const std::vector<std::string>& names() const { return names_; }
  // y[:, col_offset:] += the delta of `module` in `layer` for each token's slot (token_slots
  // [T] i32). Nothing when no adapter targets that projection.
  void apply(int64_t layer, LoraModule module, const Tensor& x, const Tensor& y, int64_t col_offset,
             const Tensor& token_slots) const;

 private:
  struct Stack {
    Tensor a;  // [slots, r_max, in]
    Tensor b;  // [slots, out, r_max]
  };
  std::map<std::pair<int64_t, LoraModule>, Stack> stacks_;
  Tensor scales_;  // [slots] f32
  std::vector<std::string> names_;
};

// The layers' hook: the LoRA delta of `module` in the current layer, when the step has adapters.
inline void apply_lora(const ForwardContext& ctx, LoraModule module, const Tensor& x, const Tensor& y,
                       int64_t col_offset = 0) {
  if (ctx.lora != nullptr) ctx.lora->apply(ctx.layer, module, x, y, col_offset, ctx.lora_slots);
}

}  // namespace strata
