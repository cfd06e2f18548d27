#include "parallel/collective_checks_support.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "strata/core/error.h"

namespace strata::test {

std::vector<uint8_t> random_bytes(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (uint8_t& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

int64_t broadcast_output_bytes(const std::vector<int64_t>& sizes) {
  int64_t per_rank = 0;
  for (int64_t n : sizes) per_rank += 8 + n;
  return per_rank;
}

void broadcast_each_size(Communicator& comm, int rank, const std::vector<int64_t>& sizes, RankOutputs& outputs) {
  uint8_t* out = outputs.data(rank);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int root = static_cast<int>(i) % comm.world_size();
    std::vector<uint8_t> bytes = rank == root ? random_bytes(sizes[i], i) : std::vector<uint8_t>(17, 0xab);
    comm.broadcast_bytes(bytes, root);
    const auto n = static_cast<int64_t>(bytes.size());
    std::memcpy(out, &n, 8);
    if (n > 0) std::memcpy(out + 8, bytes.data(), n);
    out += 8 + n;
  }
}

void expect_every_broadcast_arrived(const RankOutputs& outputs, int world_size, const std::vector<int64_t>& sizes) {
  for (int r = 0; r < world_size; ++r) {
    const uint8_t* got = outputs.data(r);
    for (size_t i = 0; i < sizes.size(); ++i) {
      int64_t n = 0;
      std::memcpy(&n, got, 8);
      ASSERT_EQ(n, sizes[i]) << "rank " << r;
      EXPECT_TRUE(n == 0 || std::memcmp(got + 8, random_bytes(n, i).data(), n) == 0) << n << " bytes on rank " << r;
      got += 8 + n;
    }
  }
}

void staggered_barriers(Communicator& comm, int rank, RankOutputs& outputs) {
  const int world_size = comm.world_size();
  for (int k = 1; k <= 5; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3 * ((rank + k) % world_size)));
    outputs.counter().fetch_add(1);
    comm.barrier();
    const int seen = outputs.counter().load();
    if (seen < k * world_size) fail("after barrier {} rank {} saw {} arrivals", k, rank, seen);
  }
}

}  // namespace strata::test
