// Which data-parallel replica takes a request: the one whose prefix cache holds the longest
// prefix of its prompt, unless that replica is much busier than the least busy one; else the
// least busy. Ties go to the lowest index. Pure, so its choices are tested exactly.
#pragma once

#include <cstdint>
#include <span>

namespace strata::server {

struct ReplicaLoad {
  int64_t num_requests = 0;       // unfinished requests it holds (running, waiting, queued)
  int32_t num_prefix_blocks = 0;  // leading full blocks of the prompt its prefix cache holds
};

// Affinity gives way to balance past this many more requests than the least busy replica
// holds, so a prefix every prompt shares (a system prompt) cannot pile every request on one.
inline constexpr int64_t kMaxAffinityImbalance = 4;

int32_t pick_replica(std::span<const ReplicaLoad> replicas, int64_t max_affinity_imbalance = kMaxAffinityImbalance);

}  // namespace strata::server
