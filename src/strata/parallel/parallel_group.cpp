#include "strata/parallel/parallel_group.h"

#include <fmt/format.h>

#include "strata/backend/backend.h"

namespace strata {
namespace {

// The group flag and name say pipeline-parallel whenever there are stages (tensor-parallel alone
// keeps its own names).
RankGroupOptions rank_group_options(const ParallelLayout& layout) {
  const bool stages = layout.pipeline_parallel.size > 1;
  const int tp = layout.tensor_parallel.size;
  return {.kind = stages ? "pipeline-parallel" : "tensor-parallel",
          .short_kind = stages ? "pp" : "tp",
          .membership = {.size = layout.world_size(), .rank = layout.rank(),
                         .group_name = stages ? layout.pipeline_parallel.group_name : layout.tensor_parallel.group_name},
          .rank_flags = [tp, stages](int rank) {
            std::vector<std::string> flags;
            if (tp > 1) flags.insert(flags.end(), {"--tensor-parallel-rank", std::to_string(rank % tp)});
            if (stages) flags.insert(flags.end(), {"--pipeline-parallel-rank", std::to_string(rank / tp)});
            return flags;
          },
          .command = layout.rank_command};
}

}  // namespace

OpenLinks open_pipeline_links(const CommunicatorOptions& group,
                              const std::function<std::unique_ptr<Communicator>(const CommunicatorOptions&)>& open) {
  const int stage = group.rank, size = group.world_size;
  OpenLinks out;
  if (size == 1) return out;
  auto open_link = [&](int link) {
    CommunicatorOptions comm = group;
    comm.group_name = fmt::format("{}.link-{}", group.group_name, link);
    comm.world_size = 2;
    comm.rank = link == stage ? 0 : 1;
    return open(comm);
  };
  // Stage 0 opens its outgoing link first, every other stage its incoming one.
  const int previous = (stage + size - 1) % size;
  if (stage == 0) out.to_next = open_link(stage);
  out.from_previous = open_link(previous);
  if (stage != 0) out.to_next = open_link(stage);
  return out;
}

ParallelGroup::ParallelGroup(const ParallelLayout& layout, Backend& backend)
    : layout_(layout), ranks_(rank_group_options(layout)) {
  auto open = [&backend](const CommunicatorOptions& comm) {
    return backend.device().is_cpu() ? make_shared_memory_communicator(comm) : make_nccl_communicator(comm, backend);
  };
  const int tp = layout.tensor_parallel.size, pp = layout.pipeline_parallel.size;
  const int tp_rank = layout.tensor_parallel.rank, stage = layout.pipeline_parallel.rank;
  if (tp > 1) {  // the ranks of this stage
    CommunicatorOptions comm = ranks_.communicator_options(pp > 1 ? fmt::format("tp-{}", stage) : "");
    comm.rank = tp_rank;
    comm.world_size = tp;
    tensor_parallel_ = open(comm);
  }
  if (pp > 1) {  // this tensor-parallel rank in every stage
    CommunicatorOptions ring = ranks_.communicator_options(tp > 1 ? fmt::format("stages-{}", tp_rank) : "");
    ring.rank = stage;
    ring.world_size = pp;
    open_links_ = open_pipeline_links(ring, open);
    links_ = open_links_.links();
  }
}

}  // namespace strata
