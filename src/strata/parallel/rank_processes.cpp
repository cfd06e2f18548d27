#include "strata/parallel/rank_processes.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "strata/core/error.h"

extern char** environ;

namespace strata {

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < all.size();) {
    const size_t end = all.find('\0', start);
    args.push_back(all.substr(start, end - start));
    start = end == std::string::npos ? all.size() : end + 1;
  }
  return args;
}

RankProcesses::RankProcesses(const std::vector<std::vector<std::string>>& extra_args) {
  const std::vector<std::string> own = own_command_line();
  for (const std::vector<std::string>& extra : extra_args) {
    std::vector<std::string> args = own;
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    // /proc/self/exe: this very binary, whatever PATH or the working directory say.
    const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) fail("could not start tensor-parallel rank {}: {}", pids_.size() + 1, std::strerror(rc));
    pids_.push_back(pid);
  }
}

RankProcesses::~RankProcesses() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (pid_t pid : pids_) {
    while (waitpid(pid, nullptr, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

}  // namespace strata
