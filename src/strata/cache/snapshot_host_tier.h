// SnapshotHostTier (--ssm-host-cache-gb): host memory (pinned on CUDA) that the prefix cache's
// SSM snapshots move to when they lose their device slot, and that a prefix hit restores
// from. Bounded by bytes; eviction is GreedyDual-Size: an entry's priority is the age clock
// when it was last used plus the tokens it saves per byte, so deep prefixes outlive shallow
// ones of the same age and stale ones still age out.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

#include "strata/cache/host_mirror.h"
#include "strata/cache/ssm_state_pool.h"

namespace strata {

// One copy between a device slot and a host row (out: to the host), told to a tensor-parallel
// rank 0 so the other ranks repeat it on their own parts of the state.
struct SnapshotCopy {
  bool out = true;
  int32_t slot = -1, row = -1;
};

struct SnapshotHostTierCounters {
  int64_t num_stored = 0;    // snapshots moved in from the device
  int64_t num_restored = 0;  // hits restored from here
  int64_t num_evicted = 0;
  int64_t bytes_stored = 0;
  int64_t bytes_restored = 0;
};

class SnapshotHostTier {
 public:
  // At most `bytes` of host memory for whole snapshots of `pool`'s slots; each copy is told to
  // `on_copy` when set.
  SnapshotHostTier(SsmStatePool& pool, int64_t bytes, Backend* backend,
                   std::function<void(const SnapshotCopy&)> on_copy = {});

  int32_t capacity() const { return rows_.num_rows(); }  // snapshots it can hold
  int64_t num_snapshots() const { return static_cast<int64_t>(entries_.size()); }
  int64_t bytes() const { return num_snapshots() * rows_.row_bytes(); }
  bool contains(uint64_t hash) const { return entries_.count(hash) > 0; }
  // Copies device slot `slot` (the state after num_tokens tokens, block hash `hash`) in,
  // evicting the lowest-priority entry when full. A hash it holds already keeps its copy.
  void store(uint64_t hash, int32_t slot, int32_t num_tokens);
  // Copies the snapshot `hash` into device slot `dst` and refreshes its priority.
  void restore(uint64_t hash, int32_t dst);
  void erase(uint64_t hash);  // the device holds this state again
  const SnapshotHostTierCounters& counters() const { return counters_; }

 private:
  struct Entry {
    int32_t row = -1;
    double value = 0;  // tokens saved per byte
    std::multimap<double, uint64_t>::iterator by_priority;
  };
  void set_priority(uint64_t hash, Entry& entry);
  void evict_one();

  HostMirror rows_;
  std::function<void(const SnapshotCopy&)> on_copy_;
  std::unordered_map<uint64_t, Entry> entries_;
  std::multimap<double, uint64_t> by_priority_;  // lowest first: the next to go
  double clock_ = 0;  // the priority of the last entry evicted
  SnapshotHostTierCounters counters_;
};

}  // namespace strata
