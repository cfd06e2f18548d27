// Where a query of a varlen step sits and how its sequence's per-token cache rows are found:
// the row's block table maps a position to its slot (block_id * block_size + offset). Shared by
// the CPU kernels that read cache rows by position (compressed and block-sparse attention).
#pragma once

#include <algorithm>
#include <cstdint>

#include "strata/core/error.h"
#include "strata/core/tensor.h"
#include "strata/ops/paged_attention.h"

namespace strata::cpu {

// Where query token t sits: its row's block table and its position.
struct QueryPlace {
  const int32_t* block_table;
  int64_t position;
};

inline QueryPlace place_of(const ops::AttentionMetadata& meta, int64_t t) {
  const int32_t* cu = meta.cu_seqlens.data_as<int32_t>();
  const int64_t r = std::upper_bound(cu, cu + meta.num_rows + 1, static_cast<int32_t>(t)) - cu - 1;
  const int64_t q_len = cu[r + 1] - cu[r], kv_len = meta.kv_lens.data_as<int32_t>()[r];
  return {meta.block_tables.data_as<int32_t>() + r * meta.block_tables.dim(1), kv_len - q_len + (t - cu[r])};
}

// rows: [num_slots, row_width] f32; the row of `position` in the query's sequence.
inline const float* row_at(const Tensor& rows, const QueryPlace& place, int64_t position, int64_t block_size) {
  const int64_t slot = place.block_table[position / block_size] * block_size + position % block_size;
  STRATA_CHECK(slot >= 0 && slot < rows.dim(0));
  return rows.data_as<float>() + slot * rows.dim(1);
}

inline float dot(const float* a, const float* b, int64_t n) {
  float s = 0.f;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace strata::cpu
