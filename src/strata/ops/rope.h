// Rotary position embedding (rotate-half / NeoX layout, as Hugging Face applies it) on
// the first `rotary_dim` dims of every q and k head. The frequency table encodes the
// scaling variant (default, linear, llama3, yarn); see rope_frequencies().
#pragma once

#include <array>
#include <vector>

#include "strata/core/model_config.h"
#include "strata/core/tensor.h"

namespace strata::ops {

// MRoPE: which position stream (0 temporal, 1 height, 2 width) each rotary frequency reads.
struct MropeSections {
  std::array<int32_t, 3> section{};  // frequencies per stream; all 0: plain rotary
  bool interleaved = false;          // t h w t h w ... (Qwen3.5) rather than runs (Qwen2-VL)

  // constexpr: the CUDA rope kernel calls it too.
  constexpr bool enabled() const { return section[0] + section[1] + section[2] > 0; }
  constexpr int stream(int64_t freq) const {
    if (!interleaved) return freq < section[0] ? 0 : freq < section[0] + section[1] ? 1 : 2;
    if (freq % 3 == 1 && freq < 3 * section[1]) return 1;
    return freq % 3 == 2 && freq < 3 * section[2] ? 2 : 0;
  }
};

struct RopeTable {
  std::vector<float> inv_freq;    // [rotary_dim / 2]
  int64_t rotary_dim = 0;
  float attention_scaling = 1.0f;  // multiplies cos and sin (yarn)
  MropeSections mrope;
};

// The inverse frequencies and scaling of `rope` for heads of size head_dim, rounded to
// `buffer_dtype`: transformers casts its inv_freq buffer with the model, so a bf16
// checkpoint rotates by bf16-rounded frequencies, and matching it means doing the same.
RopeTable rope_frequencies(const RopeConfig& rope, int64_t head_dim, int64_t max_position_embeddings,
                           DType buffer_dtype = DType::kF32);

struct RopeParams {
  int64_t rotary_dim = 0;
  float attention_scaling = 1.0f;
  MropeSections mrope;  // read only with [3, T] positions
  // Rotate by minus the angle (sin negated): DeepSeek-V4 takes the rotation that K = V carried
  // into its attention output back out at the query's position.
  bool inverse = false;
};

// q: [T, num_q_heads, head_dim], k: [T, num_kv_heads, head_dim], rotated in place;
// positions: [T] i32, or [3, T] i32 MRoPE streams (params.mrope enabled);
// inv_freq: [rotary_dim / 2] f32 on the same device.
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
