// Checks of broadcast_bytes and barrier that hold for any Communicator, run inside forked ranks
// (rank_outputs_support.h): the shared-memory and the TCP control channel tests share them.
#pragma once

#include <cstdint>
#include <vector>

#include "parallel/rank_outputs_support.h"
#include "strata/parallel/communicator.h"

namespace strata::test {

// n bytes, deterministic for a seed.
std::vector<uint8_t> random_bytes(int64_t n, uint32_t seed);

// Broadcast i sends random_bytes(sizes[i], i) from root i % world_size; each rank keeps what it
// got in outputs.data(rank), which must hold broadcast_output_bytes(sizes).
int64_t broadcast_output_bytes(const std::vector<int64_t>& sizes);
void broadcast_each_size(Communicator& comm, int rank, const std::vector<int64_t>& sizes, RankOutputs& outputs);
// After broadcast_each_size: every rank got every broadcast bitwise.
void expect_every_broadcast_arrived(const RankOutputs& outputs, int world_size, const std::vector<int64_t>& sizes);

// Five barriers, ranks arriving at staggered times; throws when a rank leaves one before every
// rank has reached it.
void staggered_barriers(Communicator& comm, int rank, RankOutputs& outputs);

}  // namespace strata::test
