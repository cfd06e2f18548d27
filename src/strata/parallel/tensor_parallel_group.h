// One process's membership of a tensor-parallel group: the communicator its layers sum over,
// its part of the weights, and on rank 0 the other ranks' processes. Rank 0 is the process the
// user started; it starts ranks 1..size-1 as copies of itself (rank_processes.h), which load
// their part of the model and then run what rank 0 sends (engine/rank_worker.h).
#pragma once

#include <memory>
#include <string>

#include "strata/model/model_weights.h"
#include "strata/parallel/communicator.h"
#include "strata/parallel/rank_processes.h"

namespace strata {

struct TensorParallelOptions {
  int size = 1;
  int rank = 0;            // > 0: a rank that rank 0 started
  std::string group_name;  // a started rank's group (rank 0 names a new one)
  bool expert_parallel = false;  // --enable-expert-parallel: MoE experts split by range
};

class TensorParallelGroup {
 public:
  // Rank 0 starts the other ranks with `--tensor-parallel-rank R --tensor-parallel-group NAME`
  // appended to its own command line. The communicator is NCCL's on a GPU backend, shared
  // memory on the CPU.
  TensorParallelGroup(const TensorParallelOptions& options, Backend& backend);
  // Rank 0: tells the other ranks to stop, then waits for them.
  ~TensorParallelGroup();

  // The layers' collectives (NCCL on a GPU, shared memory on the CPU).
  Communicator& communicator() { return *communicator_; }
  // Rank 0's messages to the other ranks (step_message.h), always through shared memory. The
  // other ranks wait on it without a deadline while rank 0 lives (a server may idle for days);
  // rank 0 still gives up on a stuck rank after the usual timeout.
  Communicator& control() { return *control_; }
  TensorShard shard() const {
    return {.rank = communicator_->rank(), .size = communicator_->world_size(), .expert_parallel = expert_parallel_};
  }

 private:
  std::unique_ptr<RankProcesses> processes_;  // rank 0 only
  std::unique_ptr<Communicator> communicator_;
  std::unique_ptr<Communicator> control_;
  bool expert_parallel_ = false;
};

}  // namespace strata
