#include "parallel/tcp_group_support.h"

#include "test_support.h"

namespace strata::test {

RendezvousOptions loopback_rendezvous(int rank, int world_size, int num_nodes, int port,
                                      std::chrono::milliseconds timeout) {
  const int per_node = world_size / num_nodes;
  return {.rank = rank,
          .world_size = world_size,
          .nodes = {.num_nodes = num_nodes, .node_rank = rank / per_node, .master_addr = "127.0.0.1",
                    .master_port = port, .timeout = timeout, .shared_flags = {{"--tensor-parallel-size", "2"}}},
          .group_name = per_test_name("group")};
}

RendezvousLinks meet(TcpListener& listener, const RendezvousOptions& options) {
  return options.rank == 0 ? host_rendezvous(listener, options) : join_rendezvous(options);
}

testing::AssertionResult contains_text(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "'" << text << "' does not hold '" << part << "'";
}

}  // namespace strata::test
