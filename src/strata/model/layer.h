// The pieces a decoder block is made of. A Layer is one whole block; a Mixer is its token
// mixer (attention or a recurrent layer), an Ffn its feed-forward part. All hold weights
// only: per-sequence state lives in the KV blocks and SSM slots that the step names.
#pragma once

#include <cstdint>

#include "strata/cache/ssm_layer_shape.h"
#include "strata/model/forward_context.h"
#include "strata/model/step_batch.h"

namespace strata {

struct LayerCaps {
  bool uses_kv_cache = false;
  int64_t ssm_h_state_elems = 0;     // per slot; 0 for layers without recurrent state
  int64_t ssm_conv_state_elems = 0;  // per slot
  // Per-sequence state beside the mixer's (Qwen4-Exp's PLE carry), kept by the SSM state pool as
  // a recurrent state of its own, so it is allocated, forked, snapshotted, rolled back and
  // swapped with the rest; the layer finds it at ctx.carry_layer. Empty: none.
  SsmLayerShape carry;
  // forward may be captured in a CUDA graph; recurrent layers only for plain decode steps
  // (StepBatch::is_plain_ssm_decode), which the runner checks.
  bool graph_safe = true;
  // false: bidirectional attention (encoders). A token's output then depends on later tokens,
  // so prompts run whole, never chunked, and never start from a prefix-cache hit.
  bool causal = true;
  // The layer splits its heads and columns over tensor-parallel ranks (weights loaded through
  // WeightScope::row_shard / column_shard) and sums its outputs over them; a model built for
  // more than one rank refuses layers without it.
  bool tensor_parallel = false;
};

class NormedInput;

// How a sublayer writes its result: out = f(h), or out += f(h), the block's residual add, which
// a last linear does in its epilogue.
enum class SublayerWrite : uint8_t { kStore, kAdd };

class Mixer {
 public:
  virtual ~Mixer() = default;
  virtual LayerCaps caps() const = 0;
  // in: [T, hidden] the block's input and its norm; out: [T, hidden].
  virtual void forward(const StepBatch& step, NormedInput& in, const Tensor& out, ForwardContext& ctx,
                       SublayerWrite write) const = 0;
};

class Ffn {
 public:
  virtual ~Ffn() = default;
  // in: [T, hidden]; out: [T, hidden].
  virtual void forward(NormedInput& in, const Tensor& out, ForwardContext& ctx, SublayerWrite write) const = 0;
  // As LayerCaps::tensor_parallel.
  virtual bool tensor_parallel() const { return false; }
};

class Layer {
 public:
  virtual ~Layer() = default;
  virtual LayerCaps caps() const = 0;
  // x: [T, hidden] residual stream, updated in place.
  virtual void forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const = 0;
};

}  // namespace strata
