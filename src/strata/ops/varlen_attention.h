// Bidirectional (non-causal) attention over packed segments: every token attends to every token
// of its own segment and no other. Vision towers attend within each image (or frame) this way.
// CPU only for now; the vision tower that uses it is built on the CPU backend.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/core/tensor.h"

namespace strata::ops {

// q, k, v, out: [T, H, D] f32; segments [cu_seqlens[s], cu_seqlens[s + 1]) cover [0, T).
void varlen_attention(const Tensor& q, const Tensor& k, const Tensor& v, const std::vector<int32_t>& cu_seqlens,
                      float scale, const Tensor& out);

}  // namespace strata::ops

namespace strata::cpu {
void varlen_attention(const Tensor& q, const Tensor& k, const Tensor& v, const std::vector<int32_t>& cu_seqlens,
                      float scale, const Tensor& out);
}
