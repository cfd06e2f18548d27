#include "strata/ops/compressed_attention.h"

#include "strata/core/error.h"
#include "strata/ops/dispatch.h"

namespace strata::ops {
namespace {

void check_rows(const Tensor& q, const Tensor& rows, const AttentionMetadata& meta, int64_t head_dim) {
  STRATA_CHECK(q.rank() == 3 && q.dtype() == DType::kF32 && q.dim(2) == head_dim);
  STRATA_CHECK(rows.rank() == 2 && rows.dtype() == DType::kF32 && rows.device() == q.device());
  STRATA_CHECK(meta.cu_seqlens.dim(0) == meta.num_rows + 1 && meta.kv_lens.dim(0) == meta.num_rows);
}

}  // namespace

void compressed_attention(const Tensor& q, const Tensor& rows, const AttentionMetadata& meta,
                          const CompressedAttentionParams& params, const Tensor& out) {
  check_rows(q, rows, meta, params.head_dim);
  STRATA_CHECK(params.sliding_window > 0 && params.head_dim <= rows.dim(1));
  STRATA_CHECK(params.rate == 0 || params.entry_offset + params.head_dim <= rows.dim(1));
  expect_shape(params.sinks, {q.dim(1)}, "compressed_attention sinks");
  expect_shape(out, q.shape(), "compressed_attention out");
  if (params.selected.defined()) {
    STRATA_CHECK(params.rate > 0 && params.selected.dtype() == DType::kI32);
    expect_shape(params.selected, {q.dim(0), params.selected.dim(1)}, "compressed_attention selected");
  }
  STRATA_CHECK(params.sinks.device() == q.device() && out.device() == q.device());
  if (q.dim(0) == 0) return;
  STRATA_DISPATCH(q.device(), cpu::compressed_attention(q, rows, meta, params, out),
                  cuda::compressed_attention(q, rows, meta, params, out));
}

void indexer_top_k(const Tensor& q, const Tensor& weights, const Tensor& rows, const AttentionMetadata& meta,
                   const IndexerParams& params, const Tensor& selected) {
  check_rows(q, rows, meta, params.head_dim);
  STRATA_CHECK(params.rate > 0 && params.top_k > 0 && params.entry_offset + params.head_dim <= rows.dim(1));
  if (weights.defined()) expect_shape(weights, {q.dim(0), q.dim(1)}, "indexer_top_k weights");
  expect_shape(selected, {q.dim(0), params.top_k}, "indexer_top_k selected");
  STRATA_CHECK(selected.dtype() == DType::kI32 && (!weights.defined() || weights.dtype() == DType::kF32));
  if (q.dim(0) == 0) return;
  if (!q.device().is_cpu()) {
    STRATA_CHECK_MSG(params.scores.defined() && params.scores.dtype() == DType::kF32 &&
                         params.scores.rank() == 2 && params.scores.dim(0) == q.dim(0) &&
                         params.scores.dim(1) >= meta.max_kv_len / params.rate,
                     "indexer_top_k on CUDA needs scores [T, >= {}] f32 scratch", meta.max_kv_len / params.rate);
  }
  STRATA_DISPATCH(q.device(), cpu::indexer_top_k(q, weights, rows, meta, params, selected),
                  cuda::indexer_top_k(q, weights, rows, meta, params, selected));
}

}  // namespace strata::ops
