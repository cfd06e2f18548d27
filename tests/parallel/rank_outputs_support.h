// Forked ranks for the communicator tests: each rank runs a body and reports through an anonymous
// shared mapping (its output bytes, the text of an Error that escaped it, a duration) and its exit
// code; the parent asserts after they have all ended. Group names carry the test's name and the
// parent's pid, so that ctest -j and two build trees never share a segment.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "strata/parallel/communicator.h"

namespace strata::test {

class RankOutputs {
 public:
  RankOutputs(int world_size, int64_t bytes_per_rank);
  ~RankOutputs();
  RankOutputs(const RankOutputs&) = delete;
  RankOutputs& operator=(const RankOutputs&) = delete;

  uint8_t* data(int rank) const;  // bytes_per_rank bytes
  void set_error(int rank, const std::string& message);
  std::string error(int rank) const;
  double& seconds(int rank);
  std::atomic<int>& counter();  // one counter all ranks share

 private:
  struct Report;
  Report& report(int rank) const;
  int world_size_;
  int64_t bytes_per_rank_;
  int64_t num_bytes_;
  uint8_t* base_;
};

// Runs body(rank) in world_size forked ranks. An Error escaping it becomes the rank's error and
// exit code 1; a rank still running after `time_limit` is killed (kRankKilledAtTimeLimit).
std::vector<int> run_ranks(int world_size, RankOutputs& outputs, const std::function<void(int rank)>& body,
                           std::chrono::milliseconds time_limit = std::chrono::seconds(60));

// Options of a group named after the running test and this process; `rank` is the caller's.
CommunicatorOptions group_options(int world_size, int64_t slot_bytes, std::chrono::milliseconds timeout);
// Whether the group's shared-memory segment still has a name (a leak once the ranks are gone).
bool segment_exists(const std::string& group_name);

}  // namespace strata::test
