#include "strata/ops/block_sparse_attention.h"

#include "strata/core/error.h"
#include "strata/ops/dispatch.h"

namespace strata::ops {

void block_sparse_attention(const Tensor& q, const Tensor& k_rows, const Tensor& v_rows, const AttentionMetadata& meta,
                            const BlockSparseAttentionParams& params, const Tensor& out) {
  const BlockSparseAttentionParams& p = params;
  STRATA_CHECK(q.rank() == 3 && q.dim(2) == p.head_dim && p.rate > 0 && p.num_kv_heads > 0);
  STRATA_CHECK(q.dim(1) % p.num_kv_heads == 0);
  STRATA_CHECK(k_rows.rank() == 2 && k_rows.dim(1) >= p.num_kv_heads * p.head_dim);
  expect_shape(v_rows, k_rows.shape(), "block_sparse_attention v_rows");
  expect_shape(out, q.shape(), "block_sparse_attention out");
  STRATA_CHECK(p.selected.dtype() == DType::kI32 && p.selected.rank() == 2 && p.selected.dim(0) == q.dim(0));
  expect_f32_on(q.device(), {&q, &k_rows, &v_rows, &out}, "block_sparse_attention");
  STRATA_CHECK(p.selected.device() == q.device());
  if (q.dim(0) == 0) return;
  STRATA_DISPATCH(q.device(), cpu::block_sparse_attention(q, k_rows, v_rows, meta, params, out),
                  cuda::block_sparse_attention(q, k_rows, v_rows, meta, params, out));
}

void mean_row_windows(const Tensor& rows, const Tensor& window_slots, int64_t column, const Tensor& out) {
  STRATA_CHECK(rows.rank() == 2 && window_slots.rank() == 2 && window_slots.dtype() == DType::kI32);
  STRATA_CHECK(out.rank() == 2 && out.dim(0) == window_slots.dim(0) && column + out.dim(1) <= rows.dim(1));
  expect_f32_on(rows.device(), {&rows, &out}, "mean_row_windows");
  STRATA_CHECK(window_slots.device() == rows.device());
  if (out.numel() == 0) return;
  STRATA_DISPATCH(rows.device(), cpu::mean_row_windows(rows, window_slots, column, out),
                  cuda::mean_row_windows(rows, window_slots, column, out));
}

void check_block_sparse_attention_supported(Device device, int64_t budget, int64_t rate, const std::string& layer) {
  if (!device.is_cpu() && budget + rate > kCudaMaxQsaPositions)
    fail("{}: QSA over indexer_budget {} + one block of {} tokens has no CUDA kernel (at most {} tokens); run this "
         "model with --device cpu", layer, budget, rate, kCudaMaxQsaPositions);
}

}  // namespace strata::ops
