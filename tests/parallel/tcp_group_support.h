// Forked ranks of a group spread over "nodes" on the loopback interface: the parent listens on a
// free port before forking (so ctest -j never races for one), rank 0 hosts the rendezvous on that
// listener and the others join it, as the ranks of a multi-node start do.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "strata/parallel/node_rendezvous.h"

namespace strata::test {

// Rank `rank` of world_size ranks split evenly over num_nodes nodes meeting at 127.0.0.1:port,
// every node sharing the flag --tensor-parallel-size 2; rank 0 names the group per_test_name("group").
RendezvousOptions loopback_rendezvous(int rank, int world_size, int num_nodes, int port,
                                      std::chrono::milliseconds timeout);
// Rank 0 hosts on `listener`, the others join.
RendezvousLinks meet(TcpListener& listener, const RendezvousOptions& options);
// Success when `text` holds `part`; the failure shows both.
testing::AssertionResult contains_text(const std::string& text, const std::string& part);

}  // namespace strata::test
