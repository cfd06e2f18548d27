#include "strata/server/replica_choice.h"

#include "strata/core/error.h"

namespace strata::server {

int32_t pick_replica(std::span<const ReplicaLoad> replicas, int64_t max_affinity_imbalance) {
  STRATA_CHECK(!replicas.empty());
  int32_t least_busy = 0, affine = 0;
  for (int32_t i = 1; i < static_cast<int32_t>(replicas.size()); ++i) {
    const ReplicaLoad &r = replicas[i], &best = replicas[affine];
    if (r.num_requests < replicas[least_busy].num_requests) least_busy = i;
    if (r.num_prefix_blocks > best.num_prefix_blocks ||
        (r.num_prefix_blocks == best.num_prefix_blocks && r.num_requests < best.num_requests))
      affine = i;
  }
  if (replicas[affine].num_prefix_blocks == 0) return least_busy;
  const int64_t excess = replicas[affine].num_requests - replicas[least_busy].num_requests;
  return excess > max_affinity_imbalance ? least_busy : affine;
}

}  // namespace strata::server
