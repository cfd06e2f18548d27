// DeepSeek-V4's KV compression (CSA and HCA compressors, and the lightning indexer's own): each
// closed window of `rate` tokens becomes one entry, a per-channel softmax-gated sum of its
// tokens' projected kv, RMS-normed. With `overlap` (CSA) an entry also pools the previous
// window's tokens through a second series: the projections are [A | B], 2 * head_dim wide, and
// entry w pools A of window w - 1 with B of window w. The source tokens' projections live in
// cache rows (one row per token, read by slot), so a window may span steps and chunks.
// Both ops run on both backends (Qwen4-Exp's QSA stores its index rows with store_row_part too).
#pragma once

#include <string>

#include "strata/core/tensor.h"

namespace strata::ops {

struct CompressedKvParams {
  int64_t head_dim = 0;     // entry width d
  int64_t rate = 0;         // tokens per window
  bool overlap = false;     // CSA: projections 2 d wide, entries pool 2 * rate slots
  int64_t kv_offset = 0;    // where a token's kv projection starts in its cache row
  int64_t gate_offset = 0;  // where its gate projection starts (same width as kv)
  float eps = 1e-6f;        // of the entry's RMS norm
};

// rows: [num_slots, row_width] f32, every token's cache row by slot;
// window_slots: [E, S] i32, S = rate (2 * rate with overlap): the source tokens of each entry in
//   window order, the previous window's first with overlap; -1 for an absent token (window 0's
//   previous window), which takes no weight;
// position_bias: [rate, width] f32 (width d, 2 d with overlap), added to the gate of the token at
//   that place in its window (transformers' position_bias / ape);
// norm_weight: [d] f32; out: [E, d] f32, normed, not yet rotated.
void compress_kv_windows(const Tensor& rows, const Tensor& window_slots, const Tensor& position_bias,
                         const Tensor& norm_weight, const CompressedKvParams& params, const Tensor& out);

// rows[slots[i], column + j] = src[i, j]: one part of each token's cache row (its kv, its
// compressor projections, or a window's entry). src: [N, n] f32; slots: [N] i32, -1 skips a row
// (padding); rows: [num_slots, row_width] f32 with column + n <= row_width.
void store_row_part(const Tensor& src, const Tensor& slots, int64_t column, const Tensor& rows);

}  // namespace strata::ops

namespace strata::cpu {
void compress_kv_windows(const Tensor& rows, const Tensor& window_slots, const Tensor& position_bias,
                         const Tensor& norm_weight, const ops::CompressedKvParams& params, const Tensor& out);
void store_row_part(const Tensor& src, const Tensor& slots, int64_t column, const Tensor& rows);
}

namespace strata::cuda {
void compress_kv_windows(const Tensor& rows, const Tensor& window_slots, const Tensor& position_bias,
                         const Tensor& norm_weight, const ops::CompressedKvParams& params, const Tensor& out);
void store_row_part(const Tensor& src, const Tensor& slots, int64_t column, const Tensor& rows);
}
