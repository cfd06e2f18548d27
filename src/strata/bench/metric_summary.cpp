#include "strata/bench/metric_summary.h"

#include <algorithm>
#include <cmath>

namespace strata::bench {
namespace {

double percentile_of_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = (static_cast<double>(sorted.size()) - 1) * std::clamp(p, 0.0, 100.0) / 100.0;
  const auto lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

}  // namespace

double percentile(std::span<const double> values, double p) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return percentile_of_sorted(sorted, p);
}

MetricSummary summarize(std::span<const double> values, std::span<const double> percentiles) {
  MetricSummary s;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty()) {
    for (double v : sorted) s.mean += v;
    s.mean /= static_cast<double>(sorted.size());
    double squares = 0;
    for (double v : sorted) squares += (v - s.mean) * (v - s.mean);
    s.std = std::sqrt(squares / static_cast<double>(sorted.size()));
  }
  s.median = percentile_of_sorted(sorted, 50);
  for (double p : percentiles) s.percentiles.emplace_back(p, percentile_of_sorted(sorted, p));
  return s;
}

}  // namespace strata::bench
