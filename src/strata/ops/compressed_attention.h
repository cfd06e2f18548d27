// DeepSeek-V4 attention over per-token cache rows (one KV head, K = V): each query sees the last
// `sliding_window` tokens' kv and compressed entries of closed windows (an entry of window w sits
// in the row of the window's last token, w * rate + rate - 1): every closed one (HCA), or the
// ones the lightning indexer selected (CSA); a per-head sink logit joins the softmax. The
// indexer's top-k lives here too. Positions follow ops::paged_attention: query i of a row with
// q_len queries and kv_len keys sits at kv_len - q_len + i. Both backends, f32 (the indexer's
// top-k is shared with Qwen4-Exp's QSA).
#pragma once

#include "strata/core/tensor.h"
#include "strata/ops/paged_attention.h"

namespace strata::ops {

struct CompressedAttentionParams {
  int64_t head_dim = 0;
  int64_t block_size = 16;
  int64_t sliding_window = 0;  // > 0
  int64_t rate = 0;            // 0: sliding only
  int64_t entry_offset = 0;    // where an entry starts in its row (kv starts at 0)
  float scale = 1.0f;
  Tensor sinks;     // [num_heads] f32
  Tensor selected;  // [T, K] i32 entry indices, -1 for none (CSA); undefined: every closed entry
};

// q: [T, num_heads, head_dim] f32; rows: [num_slots, row_width] f32, the layer's cache rows by slot
// (block_id * block_size + offset); out: [T, num_heads, head_dim] f32.
void compressed_attention(const Tensor& q, const Tensor& rows, const AttentionMetadata& meta,
                          const CompressedAttentionParams& params, const Tensor& out);

struct IndexerParams {
  int64_t head_dim = 0;      // index_head_dim
  int64_t block_size = 16;
  int64_t rate = 0;          // the CSA rate
  int64_t entry_offset = 0;  // where an indexer entry starts in its row
  int64_t top_k = 0;         // index_topk
  float scale = 1.0f;        // index_head_dim^-0.5
  Tensor scores;             // CUDA: [T, >= max_kv_len / rate] f32 scratch from the caller's workspace
};

// q: [T, num_heads, head_dim] f32 (rotated); weights: [T, num_heads] f32 (weights_proj * heads^-0.5), or
// undefined: every head weighs 1 (Qwen4-Exp's QSA indexer);
// selected: [T, top_k] i32: per query the closed entries with the highest
// sum_h weights[h] * relu(q[h] . entry) * scale, best first (ties: lower index), -1 past the closed count.
// q, rows, weights: f32 on either backend (the CUDA kernel: one block per query, k rounds of argmax).
void indexer_top_k(const Tensor& q, const Tensor& weights, const Tensor& rows, const AttentionMetadata& meta,
                   const IndexerParams& params, const Tensor& selected);

}  // namespace strata::ops

namespace strata::cpu {
void compressed_attention(const Tensor& q, const Tensor& rows, const ops::AttentionMetadata& meta,
                          const ops::CompressedAttentionParams& params, const Tensor& out);
void indexer_top_k(const Tensor& q, const Tensor& weights, const Tensor& rows, const ops::AttentionMetadata& meta,
                   const ops::IndexerParams& params, const Tensor& selected);
}  // namespace strata::cpu

namespace strata::cuda {
void compressed_attention(const Tensor& q, const Tensor& rows, const ops::AttentionMetadata& meta,
                          const ops::CompressedAttentionParams& params, const Tensor& out);
void indexer_top_k(const Tensor& q, const Tensor& weights, const Tensor& rows, const ops::AttentionMetadata& meta,
                   const ops::IndexerParams& params, const Tensor& selected);
}
