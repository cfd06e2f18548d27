// Row copies between two row-major pools, across host and device: what swapping a preempted
// sequence's KV blocks and SSM slots to host memory (and back), and moving prefix-cache
// snapshots to their host tier, are made of. dst[copy.dst_row] = src[copy.src_row], bytewise.
#pragma once

#include <cstdint>
#include <span>

#include "strata/core/tensor.h"

namespace strata::ops {

struct RowCopy {
  int32_t src_row = 0;
  int32_t dst_row = 0;
};

// src: [num_src_rows, ...], dst: [num_dst_rows, ...] with the same bytes a row (any dtype: the
// bytes move as they are). Either may be host memory, the other on a device; the copies are
// queued on the device's stream (host memory stays untouched by the caller until the
// backend's next synchronising call). Rows in range; copies may be in any order.
void copy_rows(const Tensor& dst, const Tensor& src, std::span<const RowCopy> copies);

}  // namespace strata::ops

namespace strata::cpu {
void copy_rows(const Tensor& dst, const Tensor& src, std::span<const ops::RowCopy> copies);
}
namespace strata::cuda {
void copy_rows(const Tensor& dst, const Tensor& src, std::span<const ops::RowCopy> copies);
}
