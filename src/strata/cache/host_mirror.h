// HostMirror: host rows (pinned on CUDA, through the backend) mirroring the rows of device
// pools: KV blocks (every attention layer's K and V) or SSM slots (every recurrent layer's
// h_state and conv_state). Rows are handed out and taken back like blocks; copies go through
// ops::copy_rows, stream-ordered with the steps. What swap and the snapshot host tier keep.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/cache/block_pool.h"

namespace strata {

class HostMirror {
 public:
  // device_pools: tensors [num_device_rows, ...], one row per block or slot; num_rows host
  // rows of each (0: an empty mirror). backend null: the pools are host memory already.
  HostMirror(std::vector<Tensor> device_pools, int32_t num_rows, Backend* backend);

  int32_t num_rows() const { return rows_.num_blocks(); }
  int32_t num_free() const { return rows_.num_free(); }
  int64_t row_bytes() const { return row_bytes_; }  // one row of every pool
  // n host rows appended to `out`, or none (false) when fewer are free.
  bool allocate(int32_t n, std::vector<int32_t>& out) { return rows_.allocate_n(n, out); }
  void release(std::span<const int32_t> host_rows);
  // Device rows into host rows (pairwise), and back.
  void copy_out(std::span<const int32_t> device_rows, std::span<const int32_t> host_rows);
  void copy_in(std::span<const int32_t> host_rows, std::span<const int32_t> device_rows);

 private:
  std::vector<Tensor> device_pools_;
  std::vector<Tensor> host_pools_;  // [num_rows, ...] like each device pool
  BlockPool rows_;
  int64_t row_bytes_ = 0;
};

}  // namespace strata
