// Parallel loops for the CPU backend (OpenMP underneath). The thread count is set once
// from the options; kernels split work with parallel_for over independent ranges.
#pragma once

#include <cstdint>
#include <functional>

namespace strata {

void set_num_threads(int num_threads);
int num_threads();

// Calls fn(begin, end) on disjoint ranges covering [0, n), in parallel when n is large
// enough that `min_chunk` items per thread pay for the fork.
void parallel_for(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace strata
