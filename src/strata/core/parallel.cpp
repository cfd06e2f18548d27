#include "strata/core/parallel.h"

#include <omp.h>

#include <algorithm>

namespace strata {

void set_num_threads(int num_threads) { omp_set_num_threads(std::max(1, num_threads)); }
int num_threads() { return omp_get_max_threads(); }

void parallel_for(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t max_parts = std::max<int64_t>(1, n / std::max<int64_t>(1, min_chunk));
  const int parts = static_cast<int>(std::min<int64_t>(num_threads(), max_parts));
  if (parts <= 1) {
    fn(0, n);
    return;
  }
#pragma omp parallel for num_threads(parts) schedule(static)
  for (int p = 0; p < parts; ++p) {
    const int64_t begin = n * p / parts;
    const int64_t end = n * (p + 1) / parts;
    fn(begin, end);
  }
}

}  // namespace strata
