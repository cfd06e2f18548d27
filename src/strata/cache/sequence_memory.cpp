#include "strata/cache/sequence_memory.h"

#include <algorithm>

#include "strata/core/error.h"

namespace strata {

SequenceMemory::SequenceMemory(SequenceMemoryParts parts)
    : blocks_(std::move(parts.blocks)), ssm_(std::move(parts.ssm)), verify_(std::move(parts.verify)),
      block_size_(parts.block_size), copy_kv_block_(std::move(parts.copy_kv_block)),
      kv_pools_(std::move(parts.kv_pools)), backend_(parts.backend), memory_listener_(std::move(parts.memory_listener)),
      keep_block_rows_(parts.keep_block_rows) {
  STRATA_CHECK(blocks_ != nullptr && block_size_ > 0 && (ssm_ == nullptr) == (verify_ == nullptr));
}

SequenceMemory::~SequenceMemory() {
  stop_prefix_cache();
  stop_swap_space();
}

bool SequenceMemory::reserve(std::vector<int32_t>& block_table, int64_t num_tokens) {
  const int64_t needed = (num_tokens + block_size_ - 1) / block_size_;
  const int64_t missing = needed - static_cast<int64_t>(block_table.size());
  return missing <= 0 || blocks_->allocate_n(static_cast<int32_t>(missing), block_table);
}

std::optional<int32_t> SequenceMemory::acquire_slot() {
  if (ssm_ == nullptr) return std::nullopt;
  std::optional<int32_t> slot = ssm_->allocate();
  while (!slot && prefix_cache_ != nullptr && prefix_cache_->release_snapshot_slot()) slot = ssm_->allocate();
  return slot;
}

std::optional<ForkedMemory> SequenceMemory::fork(std::span<const int32_t> parent_blocks, int32_t num_tokens,
                                                 int32_t state_slot) {
  ForkedMemory child;
  const int32_t num_full = num_tokens / block_size_;
  const bool partial = num_tokens % block_size_ != 0;
  STRATA_CHECK(static_cast<int32_t>(parent_blocks.size()) >= num_full + (partial ? 1 : 0));
  std::optional<int32_t> copy;
  if (partial && !(copy = blocks_->allocate())) return std::nullopt;
  if (state_slot >= 0) {
    const std::optional<int32_t> slot = acquire_slot();
    if (!slot) {
      if (copy) blocks_->release(*copy);
      return std::nullopt;
    }
    ssm_->copy_slot(state_slot, *slot);
    child.ssm_slot = *slot;
  }
  for (int32_t b = 0; b < num_full; ++b) {
    blocks_->add_ref(parent_blocks[b]);
    child.block_table.push_back(parent_blocks[b]);
  }
  if (copy) {
    copy_kv_block_(parent_blocks[num_full], *copy);
    child.block_table.push_back(*copy);
  }
  return child;
}

void SequenceMemory::roll_back(int32_t slot, int32_t num_verified, int32_t num_accepted) {
  const VerifyStateBuffer* buffer = verify_->find(slot);
  STRATA_CHECK(buffer != nullptr && buffer->num_tokens() == num_verified);
  ssm_->rollback(slot, *buffer, num_accepted);
  if (memory_listener_.roll_back) memory_listener_.roll_back(slot, num_verified, num_accepted);
}

void SequenceMemory::free(std::vector<int32_t>& block_table, int32_t& ssm_slot) {
  for (auto it = block_table.rbegin(); it != block_table.rend(); ++it) blocks_->release(*it);
  block_table.clear();
  if (ssm_slot >= 0) free_slot(ssm_slot);
  ssm_slot = -1;
}

void SequenceMemory::free_slot(int32_t slot) {
  verify_->release(slot);
  ssm_->free(slot);
}

PrefixMatch SequenceMemory::match_prefix(std::span<const int32_t> tokens, uint64_t cache_key,
                                         std::vector<uint64_t>& hashes, int32_t ssm_slot) {
  if (prefix_cache_ == nullptr) return {};
  prefix_cache_->extend_block_hashes(tokens, cache_key, hashes);
  const PrefixMatch match = prefix_cache_->match(hashes, static_cast<int32_t>(tokens.size()));
  prefix_cache_->restore_snapshot(match, ssm_slot);
  return match;
}

void SequenceMemory::start_prefix_cache(int32_t num_snapshot_slots, int64_t host_snapshot_bytes,
                                        KvEventSink* events) {
  STRATA_CHECK(prefix_cache_ == nullptr);
  std::unique_ptr<SnapshotHostTier> host_tier;
  if (ssm_ != nullptr && host_snapshot_bytes > 0) {
    host_tier = std::make_unique<SnapshotHostTier>(*ssm_, host_snapshot_bytes, backend_, memory_listener_.snapshot_copy);
    if (memory_listener_.snapshot_rows) memory_listener_.snapshot_rows(host_tier->capacity());
  }
  prefix_cache_ = std::make_unique<PrefixCache>(*blocks_, block_size_, ssm_.get(), num_snapshot_slots,
                                                std::move(host_tier));
  prefix_cache_->set_event_sink(events);
}

void SequenceMemory::stop_prefix_cache() { prefix_cache_.reset(); }

void SequenceMemory::start_snapshot_rows(int32_t num_rows) {
  STRATA_CHECK(ssm_ != nullptr);
  snapshot_rows_ = std::make_unique<HostMirror>(ssm_->slot_pools(), num_rows, backend_);
}

void SequenceMemory::repeat_snapshot_copy(const SnapshotCopy& copy) {
  STRATA_CHECK_MSG(snapshot_rows_ != nullptr, "rank 0 used its SSM host tier before this rank had its rows");
  const std::span<const int32_t> slot(&copy.slot, 1), row(&copy.row, 1);
  if (copy.out) snapshot_rows_->copy_out(slot, row);
  else snapshot_rows_->copy_in(row, slot);
}

void SequenceMemory::start_swap_space(int64_t bytes) {
  repeat_swap_space(bytes, -1, -1);
  if (swap_ != nullptr && memory_listener_.swap_space)
    memory_listener_.swap_space(bytes, swap_->num_host_blocks(), swap_->num_host_slots());
}

void SequenceMemory::repeat_swap_space(int64_t bytes, int32_t num_host_blocks, int32_t num_host_slots) {
  STRATA_CHECK(swap_ == nullptr);
  if (bytes <= 0) return;
  std::vector<Tensor> ssm_pools = ssm_ != nullptr ? ssm_->slot_pools() : std::vector<Tensor>{};
  swap_ = std::make_unique<SwapSpace>(SwapSpaceParts{.kv_pools = kv_pools_,
                                                     .ssm_pools = std::move(ssm_pools),
                                                     .num_device_blocks = blocks_->num_blocks(),
                                                     .num_device_slots = ssm_ != nullptr ? ssm_->capacity() : 0,
                                                     .bytes = bytes,
                                                     .backend = backend_,
                                                     .num_host_blocks = num_host_blocks,
                                                     .num_host_slots = num_host_slots,
                                                     .keep_block_rows = keep_block_rows_});
}

void SequenceMemory::stop_swap_space() {
  if (swap_ != nullptr && memory_listener_.swap_space) memory_listener_.swap_space(0, 0, 0);
  swap_.reset();
}

void SequenceMemory::repeat_swap(const SwapCopy& copy) {
  STRATA_CHECK_MSG(swap_ != nullptr, "rank 0 swapped before this rank had swap space");
  if (copy.out) swap_->copy_out_at(copy.device_blocks, copy.host_blocks, copy.device_slot, copy.host_slot);
  else swap_->copy_in_at(copy.host_blocks, copy.device_blocks, copy.host_slot, copy.device_slot);
}

bool SequenceMemory::swap_out(std::vector<int32_t>& block_table, int32_t num_computed_tokens, int32_t& ssm_slot,
                              std::optional<SwappedMemory>& swapped) {
  STRATA_CHECK(!swapped);
  if (swap_ == nullptr) return false;
  const int32_t num_blocks = (num_computed_tokens + block_size_ - 1) / block_size_;
  swapped = swap_->swap_out(block_table, num_blocks, ssm_slot);
  if (!swapped) return false;
  if (memory_listener_.copy)
    memory_listener_.copy({.out = true, .device_blocks = std::span(block_table).first(swapped->host_blocks.size()),
                         .host_blocks = swapped->host_blocks, .device_slot = ssm_slot,
                         .host_slot = swapped->host_slot});
  free(block_table, ssm_slot);
  return true;
}

bool SequenceMemory::swap_in(std::optional<SwappedMemory>& swapped, int64_t num_tokens,
                             std::vector<int32_t>& block_table, int32_t& ssm_slot) {
  STRATA_CHECK(swapped && block_table.empty() && ssm_slot < 0);
  if (swapped->host_slot >= 0) {
    const std::optional<int32_t> slot = acquire_slot();
    if (!slot) return false;
    ssm_slot = *slot;
  }
  if (!reserve(block_table, std::max<int64_t>(num_tokens, int64_t{swapped->num_blocks} * block_size_))) {
    if (ssm_slot >= 0) free_slot(ssm_slot);
    ssm_slot = -1;
    return false;
  }
  if (memory_listener_.copy)
    memory_listener_.copy({.out = false, .device_blocks = std::span(block_table).first(swapped->host_blocks.size()),
                         .host_blocks = swapped->host_blocks, .device_slot = ssm_slot,
                         .host_slot = swapped->host_slot});
  swap_->swap_in(*swapped, block_table, ssm_slot);
  swapped.reset();
  return true;
}

void SequenceMemory::free_swapped(std::optional<SwappedMemory>& swapped) {
  if (swapped && swap_ != nullptr) swap_->release(*swapped);
  swapped.reset();
}

}  // namespace strata
