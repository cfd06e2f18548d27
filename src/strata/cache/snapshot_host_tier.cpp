#include "strata/cache/snapshot_host_tier.h"

#include "strata/core/error.h"

namespace strata {

SnapshotHostTier::SnapshotHostTier(SsmStatePool& pool, int64_t bytes, Backend* backend,
                                   std::function<void(const SnapshotCopy&)> on_copy)
    : rows_(pool.slot_pools(), static_cast<int32_t>(pool.slot_bytes() > 0 ? bytes / pool.slot_bytes() : 0), backend),
      on_copy_(std::move(on_copy)) {}

void SnapshotHostTier::store(uint64_t hash, int32_t slot, int32_t num_tokens) {
  if (rows_.num_rows() == 0 || entries_.count(hash)) return;
  std::vector<int32_t> row;
  if (!rows_.allocate(1, row)) {
    evict_one();
    STRATA_CHECK(rows_.allocate(1, row));
  }
  rows_.copy_out(std::span<const int32_t>(&slot, 1), row);
  if (on_copy_) on_copy_({.out = true, .slot = slot, .row = row[0]});
  Entry& entry = entries_[hash];
  entry.row = row[0];
  entry.value = static_cast<double>(num_tokens) / static_cast<double>(rows_.row_bytes());
  entry.by_priority = by_priority_.end();
  set_priority(hash, entry);
  ++counters_.num_stored;
  counters_.bytes_stored += rows_.row_bytes();
}

void SnapshotHostTier::restore(uint64_t hash, int32_t dst) {
  Entry& entry = entries_.at(hash);
  rows_.copy_in(std::span<const int32_t>(&entry.row, 1), std::span<const int32_t>(&dst, 1));
  if (on_copy_) on_copy_({.out = false, .slot = dst, .row = entry.row});
  set_priority(hash, entry);
  ++counters_.num_restored;
  counters_.bytes_restored += rows_.row_bytes();
}

void SnapshotHostTier::erase(uint64_t hash) {
  const auto it = entries_.find(hash);
  if (it == entries_.end()) return;
  rows_.release(std::span<const int32_t>(&it->second.row, 1));
  by_priority_.erase(it->second.by_priority);
  entries_.erase(it);
}

void SnapshotHostTier::set_priority(uint64_t hash, Entry& entry) {
  if (entry.by_priority != by_priority_.end()) by_priority_.erase(entry.by_priority);
  entry.by_priority = by_priority_.emplace(clock_ + entry.value, hash);
}

void SnapshotHostTier::evict_one() {
  STRATA_CHECK(!by_priority_.empty());
  const auto lowest = by_priority_.begin();
  clock_ = lowest->first;
  const uint64_t hash = lowest->second;
  erase(hash);
  ++counters_.num_evicted;
}

}  // namespace strata
