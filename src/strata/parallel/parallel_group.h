// One process's membership of a tensor- and/or pipeline-parallel group of tp x pp ranks, placed as
// vLLM places them (rank = stage * tp + tensor-parallel rank): the communicator its stage's layers
// sum over (tp > 1), the links to the neighbouring stages' ranks of its tensor-parallel rank
// (pp > 1), and the group's processes and message channel (rank_group.h), which reaches every rank.
#pragma once

#include <memory>

#include "strata/model/model_weights.h"
#include "strata/model/pipeline_links.h"
#include "strata/parallel/communicator.h"
#include "strata/parallel/rank_group.h"

namespace strata {

class Backend;

struct TensorParallelOptions : RankGroupMembership {
  bool expert_parallel = false;  // --enable-expert-parallel: MoE experts split by range
  bool dispatch_tokens = false;  // --expert-dispatch all-to-all: tokens sent to their experts' ranks
};
using PipelineParallelOptions = RankGroupMembership;  // rank: the stage

struct ParallelLayout {
  TensorParallelOptions tensor_parallel;
  PipelineParallelOptions pipeline_parallel;
  RankCommand rank_command;  // how rank 0 starts the others (rank_processes.h)
  NodeOptions nodes;  // the machines the ranks are spread over (--nnodes)

  int world_size() const { return tensor_parallel.size * pipeline_parallel.size; }
  int rank() const { return pipeline_parallel.rank * tensor_parallel.size + tensor_parallel.rank; }
  bool splits() const { return world_size() > 1; }
};

// A stage's two links, owned.
struct OpenLinks {
  std::unique_ptr<Communicator> to_next, from_previous;
  PipelineLinks links() const { return {.from_previous = from_previous.get(), .to_next = to_next.get()}; }
};
// Stage group.rank's links of a ring of group.world_size stages: link s, named
// `<group_name>.link-s`, joins stage s (its rank 0) and stage s + 1 (the last link: stage 0).
// `open` makes one communicator. Each join waits for both ends, so the links open in an order
// that goes round the ring.
// Link `link`'s name in the ring named `ring`.
std::string pipeline_link_name(const std::string& ring, int link);
OpenLinks open_pipeline_links(const CommunicatorOptions& group,
                              const std::function<std::unique_ptr<Communicator>(const CommunicatorOptions&)>& open);

class ParallelGroup {
 public:
  // Each node's first rank starts the node's other ranks with `--tensor-parallel-rank` and/or
  // `--pipeline-parallel-rank` and a group name appended to layout.rank_command (by default its
  // own command line). Communicators are NCCL's on a GPU backend (on several nodes rank 0 hands
  // out their ids over the control channel), shared memory on the CPU (so several nodes must
  // share one machine there).
  ParallelGroup(const ParallelLayout& layout, Backend& backend);
  // Rank 0: tells the other ranks to stop, then waits for them.
  ~ParallelGroup() { ranks_.stop_ranks(); }

  Communicator& control() { return ranks_.control(); }
  // The layers' collectives within this process's stage; null without tensor parallelism.
  Communicator* tensor_parallel() { return tensor_parallel_.get(); }
  // Null without pipeline parallelism.
  const PipelineLinks* pipeline() const { return layout_.pipeline_parallel.size > 1 ? &links_ : nullptr; }
  TensorShard shard() const {
    return {.rank = layout_.tensor_parallel.rank, .size = layout_.tensor_parallel.size,
            .expert_parallel = layout_.tensor_parallel.expert_parallel,
            .dispatch_tokens = layout_.tensor_parallel.dispatch_tokens};
  }

 private:
  ParallelLayout layout_;
  RankGroup ranks_;
  std::unique_ptr<Communicator> tensor_parallel_;
  OpenLinks open_links_;
  PipelineLinks links_;
};

}  // namespace strata
