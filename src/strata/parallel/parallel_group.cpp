#include "strata/parallel/parallel_group.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "strata/backend/backend.h"
#include "strata/core/error.h"

namespace strata {
namespace {

// The group flag and name say pipeline-parallel whenever there are stages (tensor-parallel alone
// keeps its own names).
RankGroupOptions rank_group_options(const ParallelLayout& layout, bool one_host) {
  const bool stages = layout.pipeline_parallel.size > 1;
  const int tp = layout.tensor_parallel.size;
  return {.kind = stages ? "pipeline-parallel" : "tensor-parallel",
          .short_kind = stages ? "pp" : "tp",
          .membership = {.size = layout.world_size(), .rank = layout.rank(),
                         .group_name = stages ? layout.pipeline_parallel.group_name : layout.tensor_parallel.group_name},
          .nodes = layout.nodes,
          .one_host = one_host,
          .rank_flags = [tp, stages](int rank) {
            std::vector<std::string> flags;
            if (tp > 1) flags.insert(flags.end(), {"--tensor-parallel-rank", std::to_string(rank % tp)});
            if (stages) flags.insert(flags.end(), {"--pipeline-parallel-rank", std::to_string(rank / tp)});
            return flags;
          },
          .command = layout.rank_command};
}

// The suffixes (RankGroup::communicator_options) of a stage's tensor-parallel communicator and
// of a tensor-parallel rank's ring of stages; "" names the group itself.
std::string stage_suffix(const ParallelLayout& layout, int stage) {
  return layout.pipeline_parallel.size > 1 ? fmt::format("tp-{}", stage) : "";
}
std::string ring_suffix(const ParallelLayout& layout, int tp_rank) {
  return layout.tensor_parallel.size > 1 ? fmt::format("stages-{}", tp_rank) : "";
}

// The name of every data communicator any rank of the layout opens, in one order on all ranks.
std::vector<std::string> communicator_names(const ParallelLayout& layout, const RankGroup& ranks) {
  std::vector<std::string> names;
  const int tp = layout.tensor_parallel.size, pp = layout.pipeline_parallel.size;
  for (int stage = 0; tp > 1 && stage < pp; ++stage)
    names.push_back(ranks.communicator_options(stage_suffix(layout, stage)).group_name);
  for (int tp_rank = 0; pp > 1 && tp_rank < tp; ++tp_rank)
    for (int link = 0; link < pp; ++link)
      names.push_back(pipeline_link_name(ranks.communicator_options(ring_suffix(layout, tp_rank)).group_name, link));
  return names;
}

// Several nodes on GPUs: NCCL's shared-memory id exchange stays on one machine, so rank 0 makes
// every communicator's unique id and sends them all over the (TCP) control channel.
std::map<std::string, std::vector<uint8_t>> share_nccl_unique_ids(const ParallelLayout& layout, RankGroup& ranks) {
  const std::vector<std::string> names = communicator_names(layout, ranks);
  std::vector<uint8_t> all;
  if (ranks.rank() == 0)
    for (size_t i = 0; i < names.size(); ++i) {
      const std::vector<uint8_t> id = make_nccl_unique_id();
      all.insert(all.end(), id.begin(), id.end());
    }
  ranks.control().broadcast_bytes(all, 0);
  STRATA_CHECK(all.size() % std::max<size_t>(names.size(), 1) == 0);
  const size_t id_bytes = names.empty() ? 0 : all.size() / names.size();
  std::map<std::string, std::vector<uint8_t>> ids;
  for (size_t i = 0; i < names.size(); ++i)
    ids[names[i]].assign(all.begin() + static_cast<std::ptrdiff_t>(i * id_bytes),
                         all.begin() + static_cast<std::ptrdiff_t>((i + 1) * id_bytes));
  return ids;
}

}  // namespace

std::string pipeline_link_name(const std::string& ring, int link) { return fmt::format("{}.link-{}", ring, link); }

OpenLinks open_pipeline_links(const CommunicatorOptions& group,
                              const std::function<std::unique_ptr<Communicator>(const CommunicatorOptions&)>& open) {
  const int stage = group.rank, size = group.world_size;
  OpenLinks out;
  if (size == 1) return out;
  auto open_link = [&](int link) {
    CommunicatorOptions comm = group;
    comm.group_name = pipeline_link_name(group.group_name, link);
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
    : layout_(layout), ranks_(rank_group_options(layout, backend.device().is_cpu())) {
  std::map<std::string, std::vector<uint8_t>> nccl_ids;
  if (layout.nodes.num_nodes > 1 && !backend.device().is_cpu()) nccl_ids = share_nccl_unique_ids(layout, ranks_);
  auto open = [&backend, &nccl_ids](CommunicatorOptions comm) {
    if (backend.device().is_cpu()) return make_shared_memory_communicator(comm);
    if (!nccl_ids.empty()) comm.nccl_unique_id = nccl_ids.at(comm.group_name);
    return make_nccl_communicator(comm, backend);
  };
  const int tp = layout.tensor_parallel.size, pp = layout.pipeline_parallel.size;
  const int tp_rank = layout.tensor_parallel.rank, stage = layout.pipeline_parallel.rank;
  if (tp > 1) {  // the ranks of this stage
    CommunicatorOptions comm = ranks_.communicator_options(stage_suffix(layout, stage));
    comm.rank = tp_rank;
    comm.world_size = tp;
    tensor_parallel_ = open(comm);
  }
  if (pp > 1) {  // this tensor-parallel rank in every stage
    CommunicatorOptions ring = ranks_.communicator_options(ring_suffix(layout, tp_rank));
    ring.rank = stage;
    ring.world_size = pp;
    open_links_ = open_pipeline_links(ring, open);
    links_ = open_links_.links();
  }
}

}  // namespace strata
