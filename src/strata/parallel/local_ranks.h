// The ranks of a group as forked local processes, one per rank: how the shared-memory tests and
// the communicator benchmark start a group. Fork before starting threads or a CUDA context: a
// child holds only the forking thread, and CUDA cannot be used across fork.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

namespace strata {

// A rank's exit code when it was still running at the time limit and was killed.
inline constexpr int kRankKilledAtTimeLimit = -1000;

// Forks world_size children running body(rank) and waits for them all; a child exits with
// body's return value (1 after printing an exception that escaped it). Returns each rank's exit
// code (-signal for a signal). Children are reaped as they end, so their siblings see them gone.
std::vector<int> run_local_ranks(int world_size, const std::function<int(int rank)>& body,
                                 std::chrono::milliseconds time_limit);

}  // namespace strata
