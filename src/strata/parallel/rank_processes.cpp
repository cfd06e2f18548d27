#include "strata/parallel/rank_processes.h"

#include <fcntl.h>
#include <pthread.h>
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
namespace {

// posix_spawn's error code (0: started), with stdout sent to /dev/null and SIGINT blocked: a
// terminal's Ctrl-C reaches the whole process group, and rank 0 alone decides what it means (the
// Python module cancels a batch and keeps its ranks; strata serve stops them in order).
int spawn(const std::string& program, std::vector<std::string> args, pid_t& pid) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  sigaddset(&mask, SIGINT);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setsigmask(&attributes, &mask);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  const int rc = posix_spawn(&pid, program.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  return rc;
}

}  // namespace

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

RankProcesses::RankProcesses(const RankCommand& command, const std::vector<std::vector<std::string>>& extra_args) {
  // /proc/self/exe: this very binary, whatever PATH or the working directory say.
  const std::string program = command.program.empty() ? "/proc/self/exe" : command.program;
  const std::vector<std::string> own = command.program.empty() ? own_command_line() : command.args;
  for (const std::vector<std::string>& extra : extra_args) {
    std::vector<std::string> args = own;
    args.insert(args.end(), extra.begin(), extra.end());
    pid_t pid = 0;
    const int rc = spawn(program, args, pid);
    if (rc != 0) {
      const int rank = static_cast<int>(pids_.size()) + 1;
      for (pid_t started : pids_) kill(started, SIGKILL);
      for (pid_t started : pids_) waitpid(started, nullptr, 0);
      fail("could not start parallel rank {} as {}: {}{}", rank, program, std::strerror(rc),
           command.program.empty() ? "" : "; give the path of the strata command of this build");
    }
    pids_.push_back(pid);
  }
}

void RankProcesses::kill_all() {
  for (pid_t pid : pids_) kill(pid, SIGKILL);
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
