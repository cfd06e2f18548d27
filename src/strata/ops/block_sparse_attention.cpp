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
  for (const Tensor* x : {&q, &k_rows, &v_rows, &out})
    STRATA_CHECK_MSG(x->dtype() == DType::kF32 && x->device().is_cpu(), "block_sparse_attention takes f32 CPU tensors");
  cpu::block_sparse_attention(q, k_rows, v_rows, meta, params, out);
}

void mean_row_windows(const Tensor& rows, const Tensor& window_slots, int64_t column, const Tensor& out) {
  STRATA_CHECK(rows.rank() == 2 && window_slots.rank() == 2 && window_slots.dtype() == DType::kI32);
  STRATA_CHECK(out.rank() == 2 && out.dim(0) == window_slots.dim(0) && column + out.dim(1) <= rows.dim(1));
  for (const Tensor* x : {&rows, &out})
    STRATA_CHECK_MSG(x->dtype() == DType::kF32 && x->device().is_cpu(), "mean_row_windows takes f32 CPU tensors");
  cpu::mean_row_windows(rows, window_slots, column, out);
}

void check_block_sparse_attention_supported(Device device, const std::string& layer) {
  if (!device.is_cpu())
    fail("{}: Qwen4-Exp's QSA sparse attention (indexer_n_heads) has no CUDA kernels yet; run this model with "
         "--device cpu", layer);
}

}  // namespace strata::ops
