#include "strata/server/replica_prefix_table.h"

#include "strata/core/error.h"

namespace strata::server {

ReplicaPrefixTable::ReplicaPrefixTable(int32_t num_replicas, int64_t capacity_blocks)
    : replicas_(static_cast<size_t>(num_replicas)), capacity_blocks_(capacity_blocks) {
  STRATA_CHECK(num_replicas >= 1 && capacity_blocks >= 0);
}

int32_t ReplicaPrefixTable::num_matching_blocks(int32_t replica, std::span<const uint64_t> hashes) const {
  const Replica& r = replicas_[replica];
  int32_t n = 0;
  while (n < static_cast<int32_t>(hashes.size()) && r.where.count(hashes[n]) > 0) ++n;
  return n;
}

void ReplicaPrefixTable::remember(int32_t replica, std::span<const uint64_t> hashes) {
  Replica& r = replicas_[replica];
  // The chain's head goes last, as the most recent: it is the last to be forgotten, as a
  // chain without its head matches nothing.
  for (auto h = hashes.rbegin(); h != hashes.rend(); ++h) {
    const uint64_t hash = *h;
    if (auto it = r.where.find(hash); it != r.where.end()) r.lru.erase(it->second);
    r.lru.push_back(hash);
    r.where[hash] = std::prev(r.lru.end());
  }
  while (static_cast<int64_t>(r.lru.size()) > capacity_blocks_) {
    r.where.erase(r.lru.front());
    r.lru.pop_front();
  }
}

}  // namespace strata::server
