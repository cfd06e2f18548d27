// LoraSet: adapters stacked per (layer, projection) in the backend's memory ([slots, r_max, in]
// A and [slots, out, r_max] B, zero where an adapter has a smaller rank or skips that
// projection), so one ops::lora_add per projection serves a batch whose rows use different
// adapters. Slot -1 is the base model. The stacks never move: a slot's adapter can be replaced
// (load) while no request uses that slot, and captured graphs stay valid. Under tensor
// parallelism a rank holds its part as vLLM splits LoRA: B's rows of its output columns for
// column-parallel projections (q, k, v, gate, up), A's columns of its input for row-parallel
// ones (o, down), whose delta joins the partial sum before the all-reduce. Under pipeline
// parallelism a stage holds the stacks of its own layers only.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/core/model_config.h"
#include "strata/lora/lora_adapter.h"
#include "strata/model/forward_context.h"
#include "strata/model/model_weights.h"
#include "strata/model/pipeline_stage.h"

namespace strata {

// Slots for adapters loaded later (vLLM's max_loras and max_lora_rank).
struct LoraCapacity {
  int32_t max_loras = 1;
  int64_t max_lora_rank = 16;
};

// This process's part of the model: its tensor-parallel shard and its pipeline stage's layers.
struct LoraPlacement {
  TensorShard shard;
  PipelineStage stage;
};

class LoraSet {
 public:
  // A server's fixed adapters: slot i is adapters[i]; only the projections they target get stacks.
  // Throws strata::Error when an adapter does not fit the model (architecture, layer, shape).
  // `placement`: this rank's part of a model built for tensor or pipeline parallelism.
  LoraSet(const std::vector<LoraAdapter>& adapters, const ModelConfig& config, Backend& backend,
          const LoraPlacement& placement = {});
  // Empty slots with stacks for every projection of the placement's layers, filled by load().
  LoraSet(const LoraCapacity& capacity, const ModelConfig& config, Backend& backend,
          const LoraPlacement& placement = {});

  int32_t num_slots() const { return static_cast<int32_t>(names_.size()); }
  // The slot of the adapter named `name`, or -1.
  int32_t slot(const std::string& name) const;
  const std::vector<std::string>& names() const { return names_; }
  // Puts `adapter` in `slot`, replacing what was there. Throws strata::Error when it does not fit
  // the model or its rank is over the stacks' r_max (the capacity's max_lora_rank).
  void load(int32_t slot, const LoraAdapter& adapter);
  // y[:, col_offset:] += the delta of `module` in `layer` for each token's slot (token_slots
  // [T] i32). Nothing when no adapter targets that projection.
  void apply(int64_t layer, LoraModule module, const Tensor& x, const Tensor& y, int64_t col_offset,
             const Tensor& token_slots) const;

 private:
  struct Stack {
    Tensor a;  // [slots, r_max, in] (this rank's in)
    Tensor b;  // [slots, out, r_max] (this rank's out)
  };
  // This rank's part of one projection: [begin, end) of the checkpoint's inputs (row-parallel)
  // or outputs (column-parallel); the whole range on one rank.
  struct Part {
    int64_t in = 0, out = 0;        // the checkpoint's shape
    int64_t begin = 0, end = 0;
    bool splits_inputs = false;     // o, down
    int64_t local_in() const { return splits_inputs ? end - begin : in; }
    int64_t local_out() const { return splits_inputs ? out : end - begin; }
  };
  LoraSet(const ModelConfig& config, Backend& backend, const LoraPlacement& placement, int64_t num_slots,
          int64_t r_max);
  void add_stack(int64_t layer, LoraModule module);
  // The adapter's A [r, in] and B [out, r] of this rank's part, in the stacks' [r_max, in] and [out, r_max].
  std::pair<Tensor, Tensor> rank_part(const Part& part, const LoraMatrices* m, int64_t rank) const;

  Backend& backend_;
  int64_t num_layers_ = 0;
  PipelineStage stage_;  // stacks exist for its layers only
  std::array<Part, kNumLoraModules> parts_;  // per LoraModule
  int64_t r_max_ = 0;
  std::map<std::pair<int64_t, LoraModule>, Stack> stacks_;
  Tensor scales_;  // [slots] f32
  std::vector<std::string> names_;  // "" for an empty slot
};

// The prefix cache key of the requests on one adapter (its name, or another identity): blocks
// computed under one adapter never serve another or the base model (key 0).
uint64_t lora_cache_key(const std::string& adapter_identity);

// The layers' hook: the LoRA delta of `module` in the current layer, when the step has adapters.
inline void apply_lora(const ForwardContext& ctx, LoraModule module, const Tensor& x, const Tensor& y,
                       int64_t col_offset = 0) {
  if (ctx.lora != nullptr) ctx.lora->apply(ctx.layer, module, x, y, col_offset, ctx.lora_slots);
}

}  // namespace strata
