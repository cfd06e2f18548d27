// Ranks as threads of the test process (each with its own backend and the shared-memory
// communicator, as the model tests build them): runs body(rank) for every rank at once and
// expects none of them to throw, naming the rank and the error when one does.
#pragma once

#include <functional>

namespace strata::test {

void run_rank_threads(int world, const std::function<void(int rank)>& body);

}  // namespace strata::test
