#include "strata/parallel/tensor_parallel_group.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>

#include "strata/backend/backend.h"
#include "strata/core/error.h"
#include "strata/core/logging.h"
#include "strata/parallel/step_message.h"

namespace strata {
namespace {

// Unique on this machine: the process id and a per-process count.
std::string new_group_name() {
  static std::atomic<int> next{0};
  return fmt::format("strata-tp-{}-{}", getpid(), next++);
}

}  // namespace

TensorParallelGroup::TensorParallelGroup(const TensorParallelOptions& options, Backend& backend) {
  if (options.size < 1) fail("--tensor-parallel-size must be at least 1, not {}", options.size);
  CommunicatorOptions comm{.rank = options.rank, .world_size = options.size, .group_name = options.group_name};
  if (options.rank == 0) {
    comm.group_name = new_group_name();
    std::vector<std::vector<std::string>> extra;
    for (int r = 1; r < options.size; ++r)
      extra.push_back({"--tensor-parallel-rank", std::to_string(r), "--tensor-parallel-group", comm.group_name});
    processes_ = std::make_unique<RankProcesses>(extra);
  }
  communicator_ = backend.device().is_cpu() ? make_shared_memory_communicator(comm)
                                            : make_nccl_communicator(comm, backend);
}

TensorParallelGroup::~TensorParallelGroup() {
  if (processes_ == nullptr) return;
  try {
    send_to_ranks(*communicator_, {.kind = RankMessage::Kind::kStop});
  } catch (const std::exception& e) {  // a rank already gone: the processes are reaped below
    spdlog::warn("tensor-parallel ranks did not take the stop message: {}", e.what());
  }
}

}  // namespace strata
