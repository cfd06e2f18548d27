#include "strata/engine/engine_stats.h"

namespace strata {

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void Histogram::observe(double seconds) {
  size_t i = 0;
  while (i < bounds.size() && seconds > bounds[i]) ++i;
  ++counts[i];
  sum += seconds;
  ++count;
}

}  // namespace strata
