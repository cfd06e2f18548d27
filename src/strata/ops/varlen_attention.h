// Bidirectional (non-causal) attention over packed segments: every token attends to every token
// of its own segment and no other. Vision towers attend within each image (or frame) this way.
// The CPU runs it in f32; CUDA in f32 or bf16 storage with f32 math, head sizes up to 128.
#pragma once

#include <cstdint>
#include <string>

#include "strata/core/tensor.h"

namespace strata::ops {

struct VarlenSegments {
  Tensor cu_seqlens;       // [S + 1] i32 on q's device: segment s is tokens [cu_seqlens[s], cu_seqlens[s + 1])
  int64_t max_seqlen = 0;  // the longest segment's tokens (sizes the CUDA grid)
};

// Largest head size the CUDA kernel takes; head sizes must also be multiples of 4.
inline constexpr int64_t kVarlenAttentionMaxHeadDim = 128;

// q, k, v, out: [T, H, D] f32 (bf16 too on CUDA); the segments cover [0, T).
void varlen_attention(const Tensor& q, const Tensor& k, const Tensor& v, const VarlenSegments& segments, float scale,
                      const Tensor& out);

// Throws strata::Error naming `layer` when `device` has no varlen_attention for this head size.
void check_varlen_attention_supported(Device device, int64_t head_dim, const std::string& layer);

}  // namespace strata::ops

namespace strata::cpu {
void varlen_attention(const Tensor& q, const Tensor& k, const Tensor& v, const ops::VarlenSegments& segments,
                      float scale, const Tensor& out);
}
namespace strata::cuda {
void varlen_attention(const Tensor& q, const Tensor& k, const Tensor& v, const ops::VarlenSegments& segments,
                      float scale, const Tensor& out);
}
