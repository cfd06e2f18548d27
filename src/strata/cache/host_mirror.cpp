#include "strata/cache/host_mirror.h"

#include "strata/core/error.h"
#include "strata/ops/copy_rows.h"

namespace strata {
namespace {

std::vector<ops::RowCopy> pair_rows(std::span<const int32_t> src, std::span<const int32_t> dst) {
  STRATA_CHECK(src.size() == dst.size());
  std::vector<ops::RowCopy> copies;
  for (size_t i = 0; i < src.size(); ++i) copies.push_back({.src_row = src[i], .dst_row = dst[i]});
  return copies;
}

}  // namespace

HostMirror::HostMirror(std::vector<Tensor> device_pools, int32_t num_rows, Backend* backend)
    : device_pools_(std::move(device_pools)), rows_(num_rows) {
  for (const Tensor& pool : device_pools_) {
    Shape shape = pool.shape();
    shape[0] = num_rows;
    // Untouched host pages cost nothing until a copy lands in them (plain memory on the CPU).
    host_pools_.push_back(backend != nullptr ? backend->pinned_host(pool.dtype(), shape) : Tensor::host(pool.dtype(), shape));
    row_bytes_ += pool.row_bytes();
  }
}

void HostMirror::release(std::span<const int32_t> host_rows) {
  for (int32_t row : host_rows) rows_.release(row);
}

void HostMirror::copy_out(std::span<const int32_t> device_rows, std::span<const int32_t> host_rows) {
  const std::vector<ops::RowCopy> copies = pair_rows(device_rows, host_rows);
  for (size_t i = 0; i < device_pools_.size(); ++i) ops::copy_rows(host_pools_[i], device_pools_[i], copies);
}

void HostMirror::copy_in(std::span<const int32_t> host_rows, std::span<const int32_t> device_rows) {
  const std::vector<ops::RowCopy> copies = pair_rows(host_rows, device_rows);
  for (size_t i = 0; i < device_pools_.size(); ++i) ops::copy_rows(device_pools_[i], host_pools_[i], copies);
}

}  // namespace strata
