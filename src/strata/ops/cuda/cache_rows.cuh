// Device side of ops/cpu/cache_rows.h: where a query of a varlen step sits and its sequence's
// per-token cache rows by position (block table: slot = block_id * block_size + offset). Shared
// by the CUDA kernels that read cache rows by position (QSA attention, the indexer's top-k).
#pragma once

#include <cstdint>

#include "strata/core/tensor.h"
#include "strata/ops/paged_attention.h"

namespace strata::cuda {

struct CacheRowsMeta {
  const int32_t* cu_seqlens;    // [R + 1]
  const int32_t* kv_lens;       // [R]
  const int32_t* block_tables;  // [R, max_blocks]
  int64_t num_rows, max_blocks, block_size;
  int64_t num_slots, row_width;  // the rows [num_slots, row_width]
};

// meta's device tensors and the layer's rows [num_slots, row_width].
inline CacheRowsMeta cache_rows_meta(const ops::AttentionMetadata& meta, int64_t block_size, const Tensor& rows) {
  return {.cu_seqlens = meta.cu_seqlens.data_as<int32_t>(), .kv_lens = meta.kv_lens.data_as<int32_t>(),
          .block_tables = meta.block_tables.data_as<int32_t>(), .num_rows = meta.num_rows,
          .max_blocks = meta.block_tables.dim(1), .block_size = block_size, .num_slots = rows.dim(0),
          .row_width = rows.dim(1)};
}

struct QueryPlace {
  const int32_t* block_table;
  int64_t position;
};

// Query token t's row (binary search of cu_seqlens) and position.
__device__ inline QueryPlace query_place(const CacheRowsMeta& m, int64_t t) {
  int64_t lo = 0, hi = m.num_rows;  // the last row r with cu[r] <= t
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    if (m.cu_seqlens[mid] <= t) lo = mid; else hi = mid;
  }
  const int64_t q_len = m.cu_seqlens[lo + 1] - m.cu_seqlens[lo];
  return {m.block_tables + lo * m.max_blocks, m.kv_lens[lo] - q_len + (t - m.cu_seqlens[lo])};
}

// The slot of `position` in the query's sequence, or -1 when out of the rows.
__device__ inline int64_t slot_at(const CacheRowsMeta& m, const QueryPlace& place, int64_t position) {
  const int64_t slot = static_cast<int64_t>(place.block_table[position / m.block_size]) * m.block_size +
                       position % m.block_size;
  return slot >= 0 && slot < m.num_slots ? slot : -1;
}

}  // namespace strata::cuda
