#include "strata/parallel/rank_group.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>

#include "strata/core/error.h"
#include "strata/core/logging.h"
#include "strata/parallel/step_message.h"

namespace strata {
namespace {

// Unique on this machine: the kind, the process id and a per-process count.
std::string new_group_name(const std::string& short_kind) {
  static std::atomic<int> next{0};
  return fmt::format("strata-{}-{}-{}", short_kind, getpid(), next++);
}

// How long a rank waits for rank 0's next message: a dead rank 0 is noticed within
// milliseconds whatever this is, so it only bounds a rank 0 that lives but never speaks again.
constexpr std::chrono::milliseconds kIdleWait = std::chrono::hours(24 * 365);

// A started rank never outlives rank 0: the kernel kills it when its parent goes (rank 0's
// pid is in the group name; if it is gone already, this rank's parent is someone else).
void end_with_first_rank(const RankGroupOptions& options) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const std::string pattern = fmt::format("strata-{}-%d-", options.short_kind);
  int first_rank_pid = 0;
  if (std::sscanf(options.membership.group_name.c_str(), pattern.c_str(), &first_rank_pid) == 1 && getppid() != first_rank_pid)
    fail("{} rank 0 (pid {}) is gone", options.kind, first_rank_pid);
}

}  // namespace

RankGroup::RankGroup(const RankGroupOptions& options) : options_(options) {
  if (options_.membership.size < 1) fail("--{}-size must be at least 1, not {}", options_.kind, options_.membership.size);
  if (options_.membership.rank == 0) {
    options_.membership.group_name = new_group_name(options_.short_kind);
    std::vector<std::vector<std::string>> extra;
    for (int r = 1; r < options_.membership.size; ++r) {
      std::vector<std::string> flags = options_.rank_flags(r);
      flags.insert(flags.end(), {fmt::format("--{}-group", options_.kind), options_.membership.group_name});
      extra.push_back(std::move(flags));
    }
    processes_ = std::make_unique<RankProcesses>(options_.command, extra);
  }
  if (options_.membership.rank > 0) end_with_first_rank(options_);
  CommunicatorOptions control = communicator_options("control");
  if (options_.membership.rank > 0) control.timeout = kIdleWait;
  if (processes_) control.rank_pids.assign(processes_->pids().begin(), processes_->pids().end());
  control_ = make_shared_memory_communicator(control);
}

CommunicatorOptions RankGroup::communicator_options(const std::string& suffix) const {
  return {.rank = options_.membership.rank, .world_size = options_.membership.size,
          .group_name = suffix.empty() ? options_.membership.group_name : options_.membership.group_name + "." + suffix};
}

void RankGroup::stop_ranks() {
  if (processes_ == nullptr || stopped_) return;
  stopped_ = true;
  try {
    send_to_ranks(*control_, {.kind = RankMessage::Kind::kStop});
  } catch (const std::exception& e) {  // a rank already gone: the processes are reaped below
    spdlog::warn("{} ranks did not take the stop message: {}", options_.kind, e.what());
  }
}

RankGroup::~RankGroup() { stop_ranks(); }

}  // namespace strata
