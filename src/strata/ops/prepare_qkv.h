// From a fused q|k|v projection to attention inputs in one pass: split the row into heads,
// apply the per-head q/k RMSNorm (Qwen3) and rotary embedding, write q out and k, v into
// the paged cache. Same rounding points as norm -> rope -> store_kv done separately.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

struct PrepareQkvArgs {
  Tensor qkv;           // [T, (nh + 2 * nkv) * hd]: fused projection output, q | k | v
  Tensor q_norm;        // [hd] or undefined (no qk norm)
  Tensor k_norm;        // [hd] or undefined
  Tensor positions;     // [T] i32
  Tensor inv_freq;      // [rotary_dim / 2] f32 (rotary_dim 0: no rotary)
  Tensor slot_mapping;  // [T] i32 cache slot per token, -1 for none
  Tensor k_cache;       // [num_blocks, block_size, nkv, hd]
  Tensor v_cache;       // [num_blocks, block_size, nkv, hd]
  Tensor q_out;         // [T, nh, hd]
};

struct PrepareQkvParams {
  int64_t rotary_dim = 0;
  float attention_scaling = 1.0f;
  float norm_eps = 1e-6f;
  bool norm_unit_offset = false;
};

void prepare_qkv(const PrepareQkvArgs& args, const PrepareQkvParams& params);

}  // namespace strata::ops

namespace strata::cpu {
void prepare_qkv(const ops::PrepareQkvArgs& args, const ops::PrepareQkvParams& params);
}
namespace strata::cuda {
void prepare_qkv(const ops::PrepareQkvArgs& args, const ops::PrepareQkvParams& params);
}
