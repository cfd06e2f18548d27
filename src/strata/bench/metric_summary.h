// Mean, median, standard deviation and percentiles of a list of measurements, computed as
// numpy does (np.percentile's linear interpolation, population std), so figures compare
// one to one with `vllm bench`'s. An empty list summarises to zeros, as vLLM's `or 0` does.
#pragma once

#include <span>
#include <utility>
#include <vector>

namespace strata::bench {

// p in [0, 100]; values in any order. 0 for an empty list.
double percentile(std::span<const double> values, double p);

struct MetricSummary {
  double mean = 0, median = 0, std = 0;
  std::vector<std::pair<double, double>> percentiles;  // (p, value), in the order asked
};

MetricSummary summarize(std::span<const double> values, std::span<const double> percentiles);

}  // namespace strata::bench
