#include "strata/ops/compressed_kv.h"

#include "strata/core/error.h"
#include "strata/ops/dispatch.h"

namespace strata::ops {

void compress_kv_windows(const Tensor& rows, const Tensor& window_slots, const Tensor& position_bias,
                         const Tensor& norm_weight, const CompressedKvParams& params, const Tensor& out) {
  const int64_t d = params.head_dim, width = params.overlap ? 2 * d : d;
  const int64_t num_slots = params.overlap ? 2 * params.rate : params.rate;
  STRATA_CHECK(d > 0 && params.rate > 0 && rows.rank() == 2 && window_slots.rank() == 2);
  STRATA_CHECK(rows.dtype() == DType::kF32 && window_slots.dtype() == DType::kI32);
  STRATA_CHECK(params.kv_offset >= 0 && params.kv_offset + width <= rows.dim(1));
  STRATA_CHECK(params.gate_offset >= 0 && params.gate_offset + width <= rows.dim(1));
  expect_shape(window_slots, {window_slots.dim(0), num_slots}, "compress_kv_windows window_slots");
  expect_shape(position_bias, {params.rate, width}, "compress_kv_windows position_bias");
  expect_shape(norm_weight, {d}, "compress_kv_windows norm_weight");
  expect_shape(out, {window_slots.dim(0), d}, "compress_kv_windows out");
  STRATA_CHECK(window_slots.device() == rows.device() && out.device() == rows.device());
  STRATA_DISPATCH(rows.device(), cpu::compress_kv_windows(rows, window_slots, position_bias, norm_weight, params, out),
                  cuda::compress_kv_windows(rows, window_slots, position_bias, norm_weight, params, out));
}

void store_row_part(const Tensor& src, const Tensor& slots, int64_t column, const Tensor& rows) {
  STRATA_CHECK(src.rank() == 2 && rows.rank() == 2 && src.dtype() == DType::kF32 && rows.dtype() == DType::kF32);
  STRATA_CHECK(slots.dtype() == DType::kI32 && slots.numel() == src.dim(0));
  STRATA_CHECK(column >= 0 && column + src.dim(1) <= rows.dim(1));
  STRATA_CHECK(src.device() == rows.device() && slots.device() == rows.device());
  if (src.numel() == 0) return;
  STRATA_DISPATCH(rows.device(), cpu::store_row_part(src, slots, column, rows),
                  cuda::store_row_part(src, slots, column, rows));
}

}  // namespace strata::ops
