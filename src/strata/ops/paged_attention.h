// Attention over the paged KV cache for a step of varlen rows. KV caches are laid out
// [num_blocks, block_size, num_kv_heads, head_dim]; a row's keys live in the blocks its
// block table names. Query i of a row with q_len queries and kv_len keys (after this step)
// sits at position kv_len - q_len + i and sees keys up to that position (causal), or every one
// of the row's kv_len keys when not causal (encoders, whose rows are whole sequences). A sliding
// window of w limits a causal query to keys pos - w + 1 .. pos, a bidirectional one to keys
// within w - 1 of it on either side (ModernBERT's local layers).
#pragma once

#include <string>

#include "strata/core/tensor.h"

namespace strata::ops {

struct KvWriteParams {
  int64_t block_size = 16;
};

// k, v: [T, num_kv_heads, head_dim]; slot_mapping: [T] i32 (block_id * block_size + offset);
// k_cache, v_cache: [num_blocks, block_size, num_kv_heads, head_dim].
void store_kv(const Tensor& k, const Tensor& v, const Tensor& slot_mapping, const Tensor& k_cache,
              const Tensor& v_cache);

struct AttentionMetadata {
  Tensor cu_seqlens;    // [R + 1] i32: row r's queries are tokens [cu[r], cu[r+1])
  Tensor kv_lens;       // [R] i32: keys of row r after this step
  Tensor block_tables;  // [R, max_blocks_per_row] i32
  int64_t num_rows = 0;
  int64_t max_q_len = 0;
  int64_t max_kv_len = 0;
};

struct AttentionParams {
  float scale = 1.0f;
  int64_t sliding_window = 0;  // 0: unlimited; else keys less than `sliding_window` positions away
  float logit_softcap = 0.0f;  // 0: off
  Tensor sinks;                // [num_q_heads] f32 attention-sink logits, or undefined
  bool causal = true;          // false: bidirectional, every query sees all kv_len keys
};

// q: [T, num_q_heads, head_dim]; out: [T, num_q_heads, head_dim].
void paged_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                     const AttentionMetadata& meta, const AttentionParams& params, const Tensor& out);

// Head sizes the CUDA kernels are compiled for.
inline constexpr int64_t kCudaAttentionHeadDims[] = {32, 48, 64, 96, 128, 192, 256};
// Refuses, when `layer` is built, a head size `device` has no attention kernel for (an Error
// naming the layer and the supported sizes), so that no step meets it.
void check_paged_attention_supported(Device device, int64_t head_dim, const std::string& layer);

}  // namespace strata::ops

namespace strata::cpu {
void store_kv(const Tensor& k, const Tensor& v, const Tensor& slot_mapping, const Tensor& k_cache,
              const Tensor& v_cache);
void paged_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                     const ops::AttentionMetadata& meta, const ops::AttentionParams& params,
                     const Tensor& out);
}  // namespace strata::cpu
namespace strata::cuda {
void store_kv(const Tensor& k, const Tensor& v, const Tensor& slot_mapping, const Tensor& k_cache,
              const Tensor& v_cache);
void paged_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                     const ops::AttentionMetadata& meta, const ops::AttentionParams& params,
                     const Tensor& out);
}  // namespace strata::cuda
