// The TCP control channel between forked ranks of two or three "nodes" on the loopback interface:
// broadcasts from every root, of every size, arrive bitwise on every rank; a barrier holds every
// rank until all reached it; the data collectives are refused; a rank that exits or gets stuck
// makes rank 0 fail naming it (at once, or at the timeout), and a rank 0 that exits ends the others.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include <fmt/format.h>

#include "parallel/collective_checks_support.h"
#include "parallel/rank_outputs_support.h"
#include "parallel/tcp_group_support.h"
#include "strata/core/error.h"
#include "strata/parallel/tcp_control_communicator.h"
#include "test_support.h"

namespace strata::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// (world size, nodes): one rank a node, and two ranks on each of two nodes.
class TcpControlCommunicator : public testing::TestWithParam<std::pair<int, int>> {
 protected:
  int world_size() const { return GetParam().first; }
  int num_nodes() const { return GetParam().second; }
  // Forks the ranks; each meets the others and runs body with its control channel. Rank 0 gives
  // up on a rank after `timeout`.
  std::vector<int> run_group(RankOutputs& outputs, milliseconds timeout,
                             const std::function<void(Communicator&, int rank)>& body) {
    TcpListener listener("127.0.0.1", 0);
    return run_ranks(world_size(), outputs, [&](int rank) {
      RendezvousLinks links = meet(listener, loopback_rendezvous(rank, world_size(), num_nodes(), listener.port(), timeout));
      const auto control = make_tcp_control_communicator(std::move(links), rank == 0 ? timeout : milliseconds::max());
      body(*control, rank);
    });
  }
  void expect_success(const std::vector<int>& codes, const RankOutputs& outputs) {
    for (int r = 0; r < world_size(); ++r) EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << outputs.error(r);
  }
};

TEST_P(TcpControlCommunicator, BroadcastBytesOfAnySizeFromAnyRootReachesEveryRank) {
  const std::vector<int64_t> sizes = {0, 1, 1000, 70000, 3 << 20};  // 3 MiB: past the sockets' buffers
  RankOutputs outputs(world_size(), broadcast_output_bytes(sizes));
  const auto codes = run_group(outputs, seconds(20), [&](Communicator& comm, int rank) {
    broadcast_each_size(comm, rank, sizes, outputs);
  });
  expect_success(codes, outputs);
  expect_every_broadcast_arrived(outputs, world_size(), sizes);
}

TEST_P(TcpControlCommunicator, BarrierReturnsOnlyOnceEveryRankHasReachedIt) {
  RankOutputs outputs(world_size(), 0);
  const auto codes = run_group(outputs, seconds(20), [&](Communicator& comm, int rank) {
    staggered_barriers(comm, rank, outputs);
  });
  expect_success(codes, outputs);
}

TEST_P(TcpControlCommunicator, DataCollectivesAreRefused) {
  RankOutputs outputs(world_size(), 0);
  const auto codes = run_group(outputs, seconds(20), [&](Communicator& comm, int) {
    comm.all_reduce_sum(random_f32({4}, 1));
  });
  for (int r = 0; r < world_size(); ++r) {
    EXPECT_EQ(codes[r], 1) << "rank " << r;
    EXPECT_TRUE(contains_text(outputs.error(r), "carries host bytes only; all_reduce_sum goes through NCCL or shared "
                                                "memory"));
  }
}

TEST_P(TcpControlCommunicator, ARankThatExitsMakesRankZeroFailAtOnceNamingIt) {
  const int gone = world_size() - 1, node = num_nodes() - 1;
  RankOutputs outputs(world_size(), 0);
  const auto codes = run_group(outputs, seconds(10), [&](Communicator& comm, int rank) {
    if (rank == gone) _exit(0);  // as a crash would
    const auto start = std::chrono::steady_clock::now();
    try {
      comm.barrier();
    } catch (const Error&) {
      outputs.seconds(rank) = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      throw;
    }
  });
  EXPECT_EQ(codes[0], 1);
  EXPECT_TRUE(contains_text(outputs.error(0), fmt::format("rank {} (node {}, 127.0.0.1:", gone, node)));
  EXPECT_TRUE(contains_text(outputs.error(0), "is gone during barrier"));
  EXPECT_LT(outputs.seconds(0), 5.0) << "rank 0 waited for the timeout";
  // The others wait on rank 0, which left once it failed.
  for (int r = 1; r < gone; ++r) EXPECT_TRUE(contains_text(outputs.error(r), "rank 0 (at 127.0.0.1:")) << r;
}

// A send to a closed socket would succeed once; rank 0 must see the close before it sends.
TEST_P(TcpControlCommunicator, RankZeroNamesARankThatExitedBeforeItsNextMessage) {
  const int gone = world_size() - 1;
  RankOutputs outputs(world_size(), 0);
  const auto codes = run_group(outputs, seconds(10), [&](Communicator& comm, int rank) {
    if (rank == gone) _exit(0);
    if (rank == 0) std::this_thread::sleep_for(milliseconds(200));
    std::vector<uint8_t> step(rank == 0 ? 100 : 0, 7);
    comm.broadcast_bytes(step, 0);  // the others get it: rank 0 sends to the gone rank last
  });
  EXPECT_EQ(codes[0], 1);
  EXPECT_TRUE(contains_text(outputs.error(0), fmt::format("rank {} (node {}, 127.0.0.1:", gone, num_nodes() - 1)));
  EXPECT_TRUE(contains_text(outputs.error(0), "is gone during broadcast_bytes (the connection was closed)"));
}

TEST_P(TcpControlCommunicator, AStuckRankMakesRankZeroTimeOutNamingIt) {
  const int stuck = world_size() - 1;
  RankOutputs outputs(world_size(), 0);
  const auto start = std::chrono::steady_clock::now();
  const auto codes = run_group(outputs, milliseconds(500), [&](Communicator& comm, int rank) {
    if (rank == stuck) std::this_thread::sleep_for(milliseconds(1500));
    comm.barrier();
  });
  EXPECT_EQ(codes[0], 1);
  EXPECT_TRUE(contains_text(outputs.error(0), fmt::format("rank {} (node {}", stuck, num_nodes() - 1)));
  EXPECT_TRUE(contains_text(outputs.error(0), "did not answer barrier within 0.5 s"));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 6.0);
}

TEST_P(TcpControlCommunicator, RanksThatLoseRankZeroStopWithAMessage) {
  RankOutputs outputs(world_size(), 0);
  const auto codes = run_group(outputs, seconds(20), [&](Communicator& comm, int rank) {
    if (rank == 0) _exit(0);
    std::vector<uint8_t> bytes;
    comm.broadcast_bytes(bytes, 0);
  });
  for (int r = 1; r < world_size(); ++r) {
    EXPECT_EQ(codes[r], 1) << "rank " << r;
    EXPECT_TRUE(contains_text(outputs.error(r), fmt::format("rank {}: rank 0 (at 127.0.0.1:", r)));
    EXPECT_TRUE(contains_text(outputs.error(r), "is gone during broadcast_bytes"));
  }
}

// A pipeline rank that failed interrupts its inbox thread's wait for rank 0 (ControlInbox): the
// wait fails at once while rank 0 lives on, silent.
TEST_P(TcpControlCommunicator, InterruptEndsAnotherThreadsWaitForRankZero) {
  RankOutputs outputs(world_size(), 0);
  const auto codes = run_group(outputs, seconds(20), [&](Communicator& comm, int rank) {
    if (rank == 0) return std::this_thread::sleep_for(seconds(3));
    bool failed = false;
    std::thread waiter([&] {
      try {
        std::vector<uint8_t> bytes;
        comm.broadcast_bytes(bytes, 0);
      } catch (const Error&) {
        failed = true;
      }
    });
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(milliseconds(50));
    comm.interrupt();
    waiter.join();
    if (!failed || std::chrono::steady_clock::now() - start > seconds(2))
      fail("rank {}: the wait did not end at the interrupt", rank);
  });
  expect_success(codes, outputs);
}

INSTANTIATE_TEST_SUITE_P(Nodes, TcpControlCommunicator,
                         testing::Values(std::pair{2, 2}, std::pair{4, 2}, std::pair{3, 3}),
                         [](const auto& info) { return fmt::format("{}ranks_{}nodes", info.param.first, info.param.second); });

}  // namespace
}  // namespace strata::test
