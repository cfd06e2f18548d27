// The other ranks of a parallel group as child processes of rank 0 (the process the user started):
// by default the strata command runs its own command line again with each rank's flags appended;
// a rank 0 that is not the strata command (the Python module) names the program and its arguments.
// Their stdout goes to /dev/null (rank 0 prints the results); their stderr stays (what went wrong
// there); SIGINT is blocked in them (a Ctrl-C is rank 0's to handle).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace strata {

// What rank 0 runs as each other rank, before that rank's flags.
struct RankCommand {
  std::string program;             // empty: this very binary (/proc/self/exe) with its own argv
  std::vector<std::string> args;   // with a program: its argv (args[0] is the name it sees)
};

class RankProcesses {
 public:
  // Starts one process per entry: `command`, then extra_args[i]. Throws an Error naming the
  // program when it cannot be started.
  RankProcesses(const RankCommand& command, const std::vector<std::vector<std::string>>& extra_args);
  RankProcesses(const RankProcesses&) = delete;
  RankProcesses& operator=(const RankProcesses&) = delete;
  // Waits a few seconds for each rank to exit, then kills it.
  ~RankProcesses();
  // Kills the ranks now (the group could not start: they would wait for it in vain).
  void kill_all();

  // The started processes, in the order of extra_args.
  const std::vector<pid_t>& pids() const { return pids_; }

 private:
  std::vector<pid_t> pids_;
};

// This process's command line (argv), read back from /proc/self/cmdline.
std::vector<std::string> own_command_line();

}  // namespace strata
