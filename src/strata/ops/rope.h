// Rotary position embedding (rotate-half / NeoX layout, as Hugging Face applies it) on
// the first `rotary_dim` dims of every q and k head. The frequency table encodes the
// scaling variant (default, linear, llama3, yarn); see rope_frequencies().
#pragma once

#include <vector>

#include "strata/core/model_config.h"
#include "strata/core/tensor.h"

namespace strata::ops {

struct RopeTable {
  std::vector<float> inv_freq;    // [rotary_dim / 2]
  int64_t rotary_dim = 0;
  float attention_scaling = 1.0f;  // multiplies cos and sin (yarn)
};

// The inverse frequencies and scaling of `rope` for heads of size head_dim, rounded to
// `buffer_dtype`: transformers casts its inv_freq buffer with the model, so a bf16
// checkpoint rotates by bf16-rounded frequencies, and matching it means doing the same.
RopeTable rope_frequencies(const RopeConfig& rope, int64_t head_dim, int64_t max_position_embeddings,
                           DType buffer_dtype = DType::kF32);

struct RopeParams {
  int64_t rotary_dim = 0;
  float attention_scaling = 1.0f;
};

// q: [T, num_q_heads, head_dim], k: [T, num_kv_heads, head_dim], rotated in place;
// positions: [T] i32; inv_freq: [rotary_dim / 2] f32 on the same device.
void rope(const Tensor& q, const Tensor& k, const Tensor& positions, const Tensor& inv_freq,
          const RopeParams& params);

}  // namespace strata::ops

namespace strata::cpu {
void rope(const Tensor& q, const Tensor& k, const Tensor& positions, const Tensor& inv_freq,
          const ops::RopeParams& params);
}
namespace strata::cuda {
void rope(const Tensor& q, const Tensor& k, const Tensor& positions, const Tensor& inv_freq,
          const ops::RopeParams& params);
}
