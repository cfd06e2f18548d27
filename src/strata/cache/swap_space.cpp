#include "strata/cache/swap_space.h"

#include <algorithm>

#include "strata/core/error.h"

namespace strata {
namespace {

int64_t row_bytes(const std::vector<Tensor>& pools) {
  int64_t bytes = 0;
  for (const Tensor& pool : pools) bytes += pool.row_bytes();
  return bytes;
}

// Host rows for `device_rows` at the budget's share of what the device pools hold.
int32_t scaled_rows(int32_t device_rows, int64_t budget, int64_t device_bytes) {
  if (device_bytes <= budget) return device_rows;
  return static_cast<int32_t>(static_cast<double>(device_rows) * static_cast<double>(budget) /
                              static_cast<double>(device_bytes));
}

int64_t device_bytes(const SwapSpaceParts& p) {
  return row_bytes(p.kv_pools) * p.num_device_blocks + row_bytes(p.ssm_pools) * p.num_device_slots;
}

}  // namespace

SwapSpace::SwapSpace(const SwapSpaceParts& p)
    : has_kv_(row_bytes(p.kv_pools) > 0 || p.keep_block_rows || p.num_host_blocks > 0),
      blocks_(p.kv_pools,
              p.num_host_blocks >= 0 ? p.num_host_blocks : scaled_rows(p.num_device_blocks, p.bytes, device_bytes(p)),
              p.backend),
      slots_(p.ssm_pools,
             p.num_host_slots >= 0 ? p.num_host_slots : scaled_rows(p.num_device_slots, p.bytes, device_bytes(p)),
             p.backend) {}

std::optional<SwappedMemory> SwapSpace::swap_out(std::span<const int32_t> block_table, int32_t num_blocks,
                                                 int32_t slot) {
  STRATA_CHECK(num_blocks <= static_cast<int32_t>(block_table.size()));
  SwappedMemory swapped{.num_blocks = num_blocks};
  if (has_kv_ && !blocks_.allocate(num_blocks, swapped.host_blocks)) return std::nullopt;
  std::vector<int32_t> host_slot;
  if (slot >= 0 && !slots_.allocate(1, host_slot)) {
    blocks_.release(swapped.host_blocks);
    return std::nullopt;
  }
  if (has_kv_) blocks_.copy_out(block_table.first(num_blocks), swapped.host_blocks);
  if (slot >= 0) {
    slots_.copy_out(std::span<const int32_t>(&slot, 1), host_slot);
    swapped.host_slot = host_slot[0];
  }
  ++counters_.num_swapped_out;
  counters_.bytes_swapped_out += bytes_of(swapped);
  counters_.bytes_held += bytes_of(swapped);
  return swapped;
}

void SwapSpace::swap_in(SwappedMemory& swapped, std::span<const int32_t> block_table, int32_t slot) {
  STRATA_CHECK(static_cast<int32_t>(block_table.size()) >= swapped.num_blocks && (slot >= 0) == (swapped.host_slot >= 0));
  if (has_kv_) blocks_.copy_in(swapped.host_blocks, block_table.first(swapped.num_blocks));
  if (slot >= 0) slots_.copy_in(std::span<const int32_t>(&swapped.host_slot, 1), std::span<const int32_t>(&slot, 1));
  ++counters_.num_swapped_in;
  counters_.bytes_swapped_in += bytes_of(swapped);
  release(swapped);
}

void SwapSpace::release(SwappedMemory& swapped) {
  counters_.bytes_held -= bytes_of(swapped);
  blocks_.release(swapped.host_blocks);
  if (swapped.host_slot >= 0) slots_.release(std::span<const int32_t>(&swapped.host_slot, 1));
  swapped = {};
}

void SwapSpace::copy_out_at(std::span<const int32_t> device_blocks, std::span<const int32_t> host_blocks, int32_t slot,
                            int32_t host_slot) {
  STRATA_CHECK(device_blocks.size() == host_blocks.size() && (slot >= 0) == (host_slot >= 0));
  if (has_kv_) blocks_.copy_out(device_blocks, host_blocks);
  if (slot >= 0) slots_.copy_out(std::span<const int32_t>(&slot, 1), std::span<const int32_t>(&host_slot, 1));
}

void SwapSpace::copy_in_at(std::span<const int32_t> host_blocks, std::span<const int32_t> device_blocks,
                           int32_t host_slot, int32_t slot) {
  STRATA_CHECK(device_blocks.size() == host_blocks.size() && (slot >= 0) == (host_slot >= 0));
  if (has_kv_) blocks_.copy_in(host_blocks, device_blocks);
  if (slot >= 0) slots_.copy_in(std::span<const int32_t>(&host_slot, 1), std::span<const int32_t>(&slot, 1));
}

int64_t SwapSpace::bytes() const {
  return static_cast<int64_t>(num_host_blocks()) * blocks_.row_bytes() + static_cast<int64_t>(num_host_slots()) * slots_.row_bytes();
}

int64_t SwapSpace::bytes_of(const SwappedMemory& swapped) const {
  return static_cast<int64_t>(swapped.host_blocks.size()) * blocks_.row_bytes() +
         (swapped.host_slot >= 0 ? slots_.row_bytes() : 0);
}

}  // namespace strata
