// The other ranks of a tensor-parallel group as copies of this program: rank 0 (the process the
// user started) runs its own command line again with each rank's flags appended. Their stdout
// goes to /dev/null (rank 0 prints the results); their stderr stays (what went wrong there).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace strata {

class RankProcesses {
 public:
  // Starts one process per entry: this program with its own arguments, then extra_args[i].
  explicit RankProcesses(const std::vector<std::vector<std::string>>& extra_args);
  RankProcesses(const RankProcesses&) = delete;
  RankProcesses& operator=(const RankProcesses&) = delete;
  // Waits a few seconds for each rank to exit, then kills it.
  ~RankProcesses();

 private:
  std::vector<pid_t> pids_;
};

// This process's command line (argv), read back from /proc/self/cmdline.
std::vector<std::string> own_command_line();

}  // namespace strata
