#include "strata/parallel/tensor_parallel_group.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>

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

// How long a rank waits for rank 0's next message: a dead rank 0 is noticed within
// milliseconds whatever this is, so it only bounds a rank 0 that lives but never speaks again.
constexpr std::chrono::milliseconds kIdleWait = std::chrono::hours(24 * 365);

// A started rank never outlives rank 0: the kernel kills it when its parent goes (rank 0's
// pid is in the group name; if it is gone already, this rank's parent is someone else).
void end_with_first_rank(const std::string& group_name) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  int first_rank_pid = 0;
  if (std::sscanf(group_name.c_str(), "strata-tp-%d-", &first_rank_pid) == 1 && getppid() != first_rank_pid)
    fail("tensor-parallel rank 0 (pid {}) is gone", first_rank_pid);
}

}  // namespace

TensorParallelGroup::TensorParallelGroup(const TensorParallelOptions& options, Backend& backend)
    : expert_parallel_(options.expert_parallel) {
  if (options.size < 1) fail("--tensor-parallel-size must be at least 1, not {}", options.size);
  CommunicatorOptions comm{.rank = options.rank, .world_size = options.size, .group_name = options.group_name};
  if (options.rank == 0) {
    comm.group_name = new_group_name();
    std::vector<std::vector<std::string>> extra;
    for (int r = 1; r < options.size; ++r)
      extra.push_back({"--tensor-parallel-rank", std::to_string(r), "--tensor-parallel-group", comm.group_name});
    processes_ = std::make_unique<RankProcesses>(extra);
  }
  if (options.rank > 0) end_with_first_rank(options.group_name);
  CommunicatorOptions control = comm;
  control.group_name += ".control";
  if (options.rank > 0) control.timeout = kIdleWait;
  control_ = make_shared_memory_communicator(control);
  communicator_ = backend.device().is_cpu() ? make_shared_memory_communicator(comm)
                                            : make_nccl_communicator(comm, backend);
}

TensorParallelGroup::~TensorParallelGroup() {
  if (processes_ == nullptr) return;
  try {
    send_to_ranks(*control_, {.kind = RankMessage::Kind::kStop});
  } catch (const std::exception& e) {  // a rank already gone: the processes are reaped below
    spdlog::warn("tensor-parallel ranks did not take the stop message: {}", e.what());
  }
}

}  // namespace strata
