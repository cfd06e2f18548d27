// Forked local ranks: the children run the body and leave with _exit (no atexit handlers of the
// parent run twice); the parent polls them so that the dead are reaped at once.
#include "strata/parallel/local_ranks.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>

#include "strata/core/error.h"

namespace strata {
namespace {

[[noreturn]] void run_child(int rank, const std::function<int(int)>& body) {
  int code = 1;
  try {
    code = body(rank);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
  }
  std::fflush(nullptr);
  _exit(code);
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return 1;
}

}  // namespace

std::vector<int> run_local_ranks(int world_size, const std::function<int(int rank)>& body,
                                 std::chrono::milliseconds time_limit) {
  std::fflush(nullptr);  // what the parent buffered would otherwise be written by every child
  std::vector<pid_t> pids;
  for (int rank = 0; rank < world_size; ++rank) {
    const pid_t pid = fork();
    if (pid == 0) run_child(rank, body);
    if (pid < 0) {
      for (pid_t started : pids) kill(started, SIGKILL);
      for (pid_t started : pids) waitpid(started, nullptr, 0);
      fail("could not fork rank {} of {}: {}", rank, world_size, std::strerror(errno));
    }
    pids.push_back(pid);
  }
  std::vector<int> codes(world_size, kRankKilledAtTimeLimit);
  std::vector<bool> running(world_size, true);
  int num_running = world_size;
  const auto deadline = std::chrono::steady_clock::now() + time_limit;
  while (num_running > 0 && std::chrono::steady_clock::now() < deadline) {
    for (int rank = 0; rank < world_size; ++rank) {
      int status = 0;
      if (!running[rank] || waitpid(pids[rank], &status, WNOHANG) != pids[rank]) continue;
      codes[rank] = exit_code(status);
      running[rank] = false;
      --num_running;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (int rank = 0; rank < world_size; ++rank) {
    if (!running[rank]) continue;
    kill(pids[rank], SIGKILL);
    waitpid(pids[rank], nullptr, 0);
  }
  return codes;
}

}  // namespace strata
