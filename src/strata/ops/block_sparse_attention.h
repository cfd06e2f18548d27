// Qwen4-Exp's QSA attention over per-token cache rows: every `rate` tokens form a block; a query
// sees the complete blocks its indexer selected plus the tokens after its last complete block.
// A block's index key is pooled from its tokens' rows (mean_row_windows). Positions follow
// ops::paged_attention (query i of a row sits at kv_len - q_len + i). Both backends, f32 throughout
// (the layer keeps its cache rows in f32); CUDA holds a query's logits in shared memory, so its
// selection (budget) plus one block is at most kCudaMaxQsaPositions tokens.
#pragma once

#include <string>

#include "strata/core/tensor.h"
#include "strata/ops/paged_attention.h"

namespace strata::ops {

struct BlockSparseAttentionParams {
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t block_size = 16;  // of the paged cache
  int64_t rate = 0;         // tokens per QSA block
  float scale = 1.0f;
  Tensor selected;          // [T, K] i32 block indices, -1 for none
};

// q: [T, num_heads, head_dim] f32; k_rows, v_rows: [num_slots, row_width] f32, the layer's cache
// rows by slot with the heads first ([num_kv_heads, head_dim]); out: [T, num_heads, head_dim] f32.
void block_sparse_attention(const Tensor& q, const Tensor& k_rows, const Tensor& v_rows, const AttentionMetadata& meta,
                            const BlockSparseAttentionParams& params, const Tensor& out);

// out[e] = mean over j of rows[window_slots[e, j], column .. column + d): rows [num_slots, row_width]
// f32; window_slots: [E, S] i32; out: [E, d] f32.
void mean_row_windows(const Tensor& rows, const Tensor& window_slots, int64_t column, const Tensor& out);

inline constexpr int64_t kCudaMaxQsaPositions = 8192;
// Throws an Error naming `layer` when `device` cannot attend over `budget` selected tokens in
// blocks of `rate`.
void check_block_sparse_attention_supported(Device device, int64_t budget, int64_t rate, const std::string& layer);

}  // namespace strata::ops

namespace strata::cpu {
void block_sparse_attention(const Tensor& q, const Tensor& k_rows, const Tensor& v_rows,
                            const ops::AttentionMetadata& meta, const ops::BlockSparseAttentionParams& params,
                            const Tensor& out);
void mean_row_windows(const Tensor& rows, const Tensor& window_slots, int64_t column, const Tensor& out);
}  // namespace strata::cpu

namespace strata::cuda {
void block_sparse_attention(const Tensor& q, const Tensor& k_rows, const Tensor& v_rows,
                            const ops::AttentionMetadata& meta, const ops::BlockSparseAttentionParams& params,
                            const Tensor& out);
void mean_row_windows(const Tensor& rows, const Tensor& window_slots, int64_t column, const Tensor& out);
}  // namespace strata::cuda
