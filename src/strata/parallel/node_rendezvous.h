// The start of a group that spans several machines (SGLang's static rendezvous): every node is
// started by hand with the same flags and its own --node-rank; node r holds global ranks
// r*L .. r*L+L-1 (L = world / nodes). Rank 0 listens at master_addr:master_port, every other rank
// connects to it and says who it is and with which flags it started; rank 0 answers once all
// have come (or refuses them all, saying why). The links then carry the control channel.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "strata/parallel/tcp_connection.h"

namespace strata {

struct NodeOptions {
  int num_nodes = 1;  // --nnodes
  int node_rank = 0;  // --node-rank
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  // How long ranks wait for each other at the start, and rank 0 for any rank's answer after it.
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
  // (flag, value) pairs every node must share; a node whose differ is refused, naming the flag.
  std::vector<std::pair<std::string, std::string>> shared_flags;
};

// L, the ranks each node holds; throws an Error when world_size does not split evenly over the
// nodes or node_rank is not one of them.
int ranks_per_node(const NodeOptions& nodes, int world_size);

struct RendezvousOptions {
  int rank = 0;
  int world_size = 1;
  NodeOptions nodes;
  std::string group_name;  // rank 0: the name every rank takes (shared memory, NCCL)
  // Every rank must run on rank 0's machine: the CPU's data collectives go through shared memory.
  bool one_host = false;
  std::string host;  // empty: this machine's name and boot id (tests pass others)
};

// The group's links after the rendezvous.
struct RendezvousLinks {
  int rank = 0;
  int world_size = 1;
  int ranks_per_node = 1;
  std::string group_name;  // rank 0's
  std::string master;      // "host:port" where rank 0 listens, for messages
  // Rank 0: links[r] reaches rank r (links[0] is unused); the others: links[0] reaches rank 0.
  std::vector<TcpConnection> links;
};

// Rank 0, on a listener it made (tests listen on port 0): waits for every other rank until the
// deadline. Throws an Error naming the nodes that did not come or the flag that differs; the
// ranks that came get the same message.
RendezvousLinks host_rendezvous(TcpListener& listener, const RendezvousOptions& options);
// Ranks > 0: connects to rank 0 (retrying until the deadline) and waits for its answer.
RendezvousLinks join_rendezvous(const RendezvousOptions& options);
// Rank 0 listens at master_addr:master_port and hosts; the others join.
RendezvousLinks rendezvous(const RendezvousOptions& options);

}  // namespace strata
