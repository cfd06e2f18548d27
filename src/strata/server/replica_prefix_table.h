// What the data-parallel front end remembers of each replica's prefix cache: the chain hashes
// of the full prompt blocks it sent there, at most capacity_blocks a replica (the replica's KV
// pool), the least recently sent forgotten first. An estimate used only to route: a replica
// may have evicted a block sooner. Not thread-safe: the front end holds its lock.
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace strata::server {

class ReplicaPrefixTable {
 public:
  ReplicaPrefixTable(int32_t num_replicas, int64_t capacity_blocks);

  // How many of `hashes` (a prompt's chain, in order) replica r is thought to hold from the start.
  int32_t num_matching_blocks(int32_t replica, std::span<const uint64_t> hashes) const;
  // Replica r now holds `hashes`: remembered, or refreshed as the most recent.
  void remember(int32_t replica, std::span<const uint64_t> hashes);
  int64_t num_blocks(int32_t replica) const { return static_cast<int64_t>(replicas_[replica].lru.size()); }

 private:
  struct Replica {
    std::list<uint64_t> lru;  // front: least recently sent
    std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where;
  };
  std::vector<Replica> replicas_;
  int64_t capacity_blocks_;
};

}  // namespace strata::server
