// The processes of one tensor- or pipeline-parallel group and rank 0's message channel to them.
// The process the user started on a node (rank 0 on one machine) starts the node's other ranks
// (rank_processes.h: copies of itself, or the program `command` names) with their place
// (rank_flags) and `--<kind>-group NAME` appended, which load their part of the model and then run
// what rank 0 sends (engine/rank_worker.h) until it says stop. On several nodes
// (node_rendezvous.h) the channel is TCP, else shared memory.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "strata/parallel/communicator.h"
#include "strata/parallel/node_rendezvous.h"
#include "strata/parallel/rank_processes.h"

namespace strata {

// A process's place in a group, from --<kind>-size and the hidden flags rank 0 gives the ranks it starts.
struct RankGroupMembership {
  int size = 1;
  int rank = 0;            // > 0: a rank that rank 0 started
  std::string group_name;  // a started rank's group (rank 0 names a new one)
};

struct RankGroupOptions {
  std::string kind;        // "tensor-parallel" or "pipeline-parallel": names the flags in errors and argv
  std::string short_kind;  // "tp" or "pp": in the group's name
  RankGroupMembership membership;  // size: every rank of the group; rank: this process's
  NodeOptions nodes;               // --nnodes and where rank 0 listens
  bool one_host = false;           // the data collectives need shared memory (the CPU)
  // The hidden flags that place rank r (r > 0) in the group, given after its own command line.
  std::function<std::vector<std::string>(int rank)> rank_flags;
  RankCommand command;  // what rank 0 runs before those flags; empty: its own command line
};

class RankGroup {
 public:
  explicit RankGroup(const RankGroupOptions& options);
  // Rank 0: stop_ranks(), then waits for the ranks to exit.
  ~RankGroup();

  // Rank 0's messages to the other ranks (step_message.h), through shared memory on one node and
  // TCP on several. The other ranks wait on it without a deadline while rank 0 lives (a server
  // may idle for days); rank 0 still gives up on a stuck rank after the timeout.
  Communicator& control() { return *control_; }
  // The options of another communicator of this group, named `<group>.<suffix>`.
  CommunicatorOptions communicator_options(const std::string& suffix) const;
  // Rank 0: tells the other ranks to stop (once); a no-op elsewhere.
  void stop_ranks();
  int rank() const { return options_.membership.rank; }
  int size() const { return options_.membership.size; }

 private:
  RankGroupOptions options_;
  void start_local_ranks();
  std::unique_ptr<Communicator> open_control();

  std::unique_ptr<RankProcesses> processes_;  // the process the user started, of its node's ranks
  std::unique_ptr<Communicator> control_;
  bool stopped_ = false;
};

}  // namespace strata
