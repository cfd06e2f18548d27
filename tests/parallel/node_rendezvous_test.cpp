// The multi-node rendezvous between forked ranks on the loopback interface: every rank gets rank
// 0's group name and rank 0 a link to each; a node that never arrives, a rank 0 that never
// listens, a flag that differs and a second machine on the CPU fail within the timeout, with the
// message naming what to fix on every rank that came.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <thread>

#include <fmt/format.h>

#include "parallel/rank_outputs_support.h"
#include "parallel/tcp_group_support.h"
#include "strata/core/error.h"
#include "test_support.h"

namespace strata::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int64_t kNameBytes = 256;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(RanksPerNode, SplitsTheWorldEvenlyOrSaysWhy) {
  EXPECT_EQ(ranks_per_node({.num_nodes = 1}, 4), 4);
  EXPECT_EQ(ranks_per_node({.num_nodes = 2, .node_rank = 1}, 4), 2);
  EXPECT_EQ(ranks_per_node({.num_nodes = 4, .node_rank = 3}, 4), 1);
  try {
    ranks_per_node({.num_nodes = 3}, 4);
    FAIL() << "3 nodes split 4 ranks";
  } catch (const Error& e) {
    EXPECT_TRUE(contains_text(e.what(), "--nnodes 3 does not split the 4 ranks"));
  }
  try {
    ranks_per_node({.num_nodes = 2, .node_rank = 2}, 4);
    FAIL() << "node 2 of 2";
  } catch (const Error& e) {
    EXPECT_TRUE(contains_text(e.what(), "--node-rank 2 is not one of the 2 nodes: give 0 to 1"));
  }
}

TEST(NodeRendezvous, EveryRankGetsTheGroupNameAndRankZeroALinkToEach) {
  constexpr int kWorld = 4;
  TcpListener listener("127.0.0.1", 0);
  RankOutputs outputs(kWorld, kNameBytes);
  const auto codes = run_ranks(kWorld, outputs, [&](int rank) {
    const RendezvousLinks links = meet(listener, loopback_rendezvous(rank, kWorld, 2, listener.port(), seconds(20)));
    std::string seen = fmt::format("{} {} {} {} links:", links.group_name, links.rank, links.world_size,
                                   links.ranks_per_node);
    for (const TcpConnection& link : links.links) seen += link.is_open() ? " open" : " none";
    std::strncpy(reinterpret_cast<char*>(outputs.data(rank)), seen.c_str(), kNameBytes - 1);
  });
  const std::string name = per_test_name("group");
  for (int r = 0; r < kWorld; ++r) {
    ASSERT_EQ(codes[r], 0) << "rank " << r << ": " << outputs.error(r);
    const std::string links = r == 0 ? "none open open open" : "open";
    EXPECT_EQ(reinterpret_cast<const char*>(outputs.data(r)), fmt::format("{} {} 4 2 links: {}", name, r, links));
  }
}

TEST(NodeRendezvous, ANodeThatNeverArrivesFailsEveryRankWithinTheTimeoutNamingIt) {
  constexpr int kWorld = 4;  // node 1 (ranks 2 and 3) is never started
  TcpListener listener("127.0.0.1", 0);
  RankOutputs outputs(kWorld, 0);
  const auto start = std::chrono::steady_clock::now();
  const auto codes = run_ranks(kWorld, outputs, [&](int rank) {
    if (rank < 2) meet(listener, loopback_rendezvous(rank, kWorld, 2, listener.port(), seconds(1)));
  });
  EXPECT_LT(seconds_since(start), 4.0);
  const std::string want = fmt::format("multi-node start: node 1 (ranks 2..3) did not arrive at 127.0.0.1:{} within 1 s",
                                       listener.port());
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(codes[r], 1) << "rank " << r;
    EXPECT_TRUE(contains_text(outputs.error(r), want)) << "rank " << r;
  }
}

TEST(NodeRendezvous, MissingRanksAreNamedByNode) {
  constexpr int kWorld = 4;  // rank 1 of node 0 and rank 3 of node 1 never come
  TcpListener listener("127.0.0.1", 0);
  RankOutputs outputs(kWorld, 0);
  const auto codes = run_ranks(kWorld, outputs, [&](int rank) {
    if (rank % 2 == 0) meet(listener, loopback_rendezvous(rank, kWorld, 2, listener.port(), milliseconds(500)));
  });
  for (const int r : {0, 2}) {
    EXPECT_EQ(codes[r], 1) << "rank " << r;
    EXPECT_TRUE(contains_text(outputs.error(r), "rank 1 of node 0 and rank 3 of node 1 did not arrive")) << r;
  }
}

TEST(NodeRendezvous, AStrangerOnThePortIsIgnored) {
  TcpListener listener("127.0.0.1", 0);
  RankOutputs outputs(3, kNameBytes);
  const auto codes = run_ranks(3, outputs, [&](int rank) {
    if (rank == 2) {  // an HTTP client that knocks first
      TcpConnection stranger = connect_with_retries("127.0.0.1", listener.port(), TcpDeadline::max(), "");
      const std::string request = "GET / HTTP/1.1\r\n\r\n";
      stranger.send_all(request.data(), request.size(), TcpDeadline::max());
      return;
    }
    if (rank == 1) std::this_thread::sleep_for(milliseconds(200));
    const RendezvousLinks links = meet(listener, loopback_rendezvous(rank, 2, 2, listener.port(), seconds(20)));
    std::strncpy(reinterpret_cast<char*>(outputs.data(rank)), links.group_name.c_str(), kNameBytes - 1);
  });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << outputs.error(r);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(reinterpret_cast<const char*>(outputs.data(r)), per_test_name("group"));
}

TEST(NodeRendezvous, ARankThatCannotReachRankZeroGivesUpAtTheDeadlineNamingTheAddress) {
  int port = 0;
  {
    TcpListener closed("127.0.0.1", 0);  // a port that nobody listens on once this closes
    port = closed.port();
  }
  const auto start = std::chrono::steady_clock::now();
  try {
    join_rendezvous(loopback_rendezvous(1, 2, 2, port, milliseconds(600)));
    FAIL() << "joined a group without rank 0";
  } catch (const Error& e) {
    EXPECT_TRUE(contains_text(e.what(), fmt::format("could not reach 127.0.0.1:{} within", port)));
    EXPECT_TRUE(contains_text(e.what(), "Connection refused"));
    EXPECT_TRUE(contains_text(e.what(), fmt::format("start node 0 with --master-addr 127.0.0.1 --master-port {}", port)));
  }
  const double waited = seconds_since(start);
  EXPECT_GT(waited, 0.5);
  EXPECT_LT(waited, 2.0);
}

// Two nodes of one rank each meet, `change` applied to each rank's options; both must fail with `message`.
void expect_both_refused(const std::function<void(RendezvousOptions&)>& change, const std::string& message) {
  TcpListener listener("127.0.0.1", 0);
  RankOutputs outputs(2, 0);
  const auto codes = run_ranks(2, outputs, [&](int rank) {
    RendezvousOptions options = loopback_rendezvous(rank, 2, 2, listener.port(), seconds(20));
    change(options);
    meet(listener, options);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(codes[r], 1) << "rank " << r;
    EXPECT_TRUE(contains_text(outputs.error(r), message)) << "rank " << r;
  }
}

TEST(NodeRendezvous, AFlagThatDiffersIsRefusedOnEveryRankNamingIt) {
  expect_both_refused(
      [](RendezvousOptions& options) {
        if (options.rank == 1) options.nodes.shared_flags = {{"--tensor-parallel-size", "4"}};
      },
      "multi-node start: node 1 was started with --tensor-parallel-size 4, node 0 with --tensor-parallel-size 2: start "
      "every node with the same model and parallel flags");
}

TEST(NodeRendezvous, OnTheCpuEveryNodeMustShareRankZerosMachine) {
  expect_both_refused(
      [](RendezvousOptions& options) {
        options.one_host = true;
        options.host = options.rank == 0 ? "machine-a" : "machine-b";
      },
      "node 1 runs on machine-b, node 0 on machine-a: on the CPU");
}

}  // namespace
}  // namespace strata::test
