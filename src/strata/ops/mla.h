// Multi-head latent attention (DeepSeek-V2/V3) on the ordinary paged cache: the latent is
// expanded into per-head keys and values at write time. Each head is laid out
// [rope dims | no-rope dims] so the ordinary rotary op (first dims of a head) applies; values
// are padded with zeros to the key width, since the cache holds one head width.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// kv: [T, H, nope + v] (kv_b_proj's output); k_rot: [T, rope] (shared by all heads);
// k_out: [T, H, rope + nope] = [k_rot | k_nope]; v_out: [T, H, rope + nope] = [v | 0].
void mla_expand_kv(const Tensor& kv, const Tensor& k_rot, int64_t nope_dim, const Tensor& k_out, const Tensor& v_out);

// The first out.dim(2) values of every head: out[t, h, :] = src[t, h, :out_dim].
// src: [T, H, D]; out: [T, H, d] with d <= D.
void narrow_heads(const Tensor& src, const Tensor& out);

}  // namespace strata::ops

namespace strata::cpu {
void mla_expand_kv(const Tensor& kv, const Tensor& k_rot, int64_t nope_dim, const Tensor& k_out, const Tensor& v_out);
void narrow_heads(const Tensor& src, const Tensor& out);
}  // namespace strata::cpu
namespace strata::cuda {
void mla_expand_kv(const Tensor& kv, const Tensor& k_rot, int64_t nope_dim, const Tensor& k_out, const Tensor& v_out);
void narrow_heads(const Tensor& src, const Tensor& out);
}  // namespace strata::cuda
