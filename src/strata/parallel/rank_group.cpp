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
#include "strata/parallel/tcp_control_communicator.h"

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

// A started rank never outlives the process that started it: the kernel kills it when its parent
// goes (that process's pid is in the group name; if it is gone already, the parent is someone else).
void end_with_starting_rank(const RankGroupOptions& options) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const std::string pattern = fmt::format("strata-{}-%d-", options.short_kind);
  int starter_pid = 0;
  if (std::sscanf(options.membership.group_name.c_str(), pattern.c_str(), &starter_pid) == 1 && getppid() != starter_pid)
    fail("{} rank {}: the process that started it (pid {}) is gone", options.kind, options.membership.rank, starter_pid);
}

}  // namespace

RankGroup::RankGroup(const RankGroupOptions& options) : options_(options) {
  if (options_.membership.size < 1) fail("--{}-size must be at least 1, not {}", options_.kind, options_.membership.size);
  // Started by the user (no group name yet): its node's first rank.
  if (options_.membership.group_name.empty()) {
    start_local_ranks();
  } else {
    end_with_starting_rank(options_);
  }
  try {
    control_ = open_control();
  } catch (...) {
    if (processes_) processes_->kill_all();
    throw;
  }
}

void RankGroup::start_local_ranks() {
  const int per_node = ranks_per_node(options_.nodes, options_.membership.size);
  const int first = options_.nodes.node_rank * per_node;
  STRATA_CHECK_MSG(options_.membership.rank == first, "node {} starts at rank {}, not {}", options_.nodes.node_rank,
                   first, options_.membership.rank);
  options_.membership.group_name = new_group_name(options_.short_kind);
  std::vector<std::vector<std::string>> extra;
  for (int r = first + 1; r < first + per_node; ++r) {
    std::vector<std::string> flags = options_.rank_flags(r);
    flags.insert(flags.end(), {fmt::format("--{}-group", options_.kind), options_.membership.group_name});
    extra.push_back(std::move(flags));
  }
  processes_ = std::make_unique<RankProcesses>(options_.command, extra);
}

// Several nodes: the ranks meet rank 0 over TCP and take its group name (the name a node's own
// processes got stays in their command lines, where it says who started them).
std::unique_ptr<Communicator> RankGroup::open_control() {
  const int rank = options_.membership.rank;
  if (options_.nodes.num_nodes > 1) {
    RendezvousLinks links = rendezvous({.rank = rank, .world_size = options_.membership.size, .nodes = options_.nodes,
                                        .group_name = options_.membership.group_name, .one_host = options_.one_host});
    options_.membership.group_name = links.group_name;
    return make_tcp_control_communicator(std::move(links),
                                         rank == 0 ? options_.nodes.timeout : std::chrono::milliseconds::max());
  }
  CommunicatorOptions control = communicator_options("control");
  if (rank > 0) control.timeout = kIdleWait;
  if (processes_) control.rank_pids.assign(processes_->pids().begin(), processes_->pids().end());
  return make_shared_memory_communicator(control);
}

CommunicatorOptions RankGroup::communicator_options(const std::string& suffix) const {
  return {.rank = options_.membership.rank, .world_size = options_.membership.size,
          .group_name = suffix.empty() ? options_.membership.group_name : options_.membership.group_name + "." + suffix,
          .timeout = options_.nodes.timeout};
}

void RankGroup::stop_ranks() {
  if (rank() != 0 || stopped_) return;
  stopped_ = true;
  try {
    send_to_ranks(*control_, {.kind = RankMessage::Kind::kStop});
  } catch (const std::exception& e) {  // a rank already gone: the processes are reaped below
    spdlog::warn("{} ranks did not take the stop message: {}", options_.kind, e.what());
  }
}

RankGroup::~RankGroup() { stop_ranks(); }

}  // namespace strata
