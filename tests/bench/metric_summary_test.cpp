#include "strata/bench/metric_summary.h"

#include <gtest/gtest.h>

#include <cmath>

namespace strata::bench {
namespace {

// Expected values are numpy's: np.percentile (linear), np.median, np.std (population).
TEST(MetricSummary, PercentilesInterpolateAsNumpyDoes) {
  const std::vector<double> values = {4, 1, 3, 2};  // any order
  EXPECT_DOUBLE_EQ(percentile(values, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(values, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(values, 99), 3.97);
  EXPECT_DOUBLE_EQ(percentile(values, 100), 4.0);
  EXPECT_DOUBLE_EQ(percentile(std::vector<double>{7}, 99), 7.0);
}

TEST(MetricSummary, MeanMedianStdAndAskedPercentilesInOrder) {
  const std::vector<double> values = {10, 20, 30, 40, 50};
  const std::vector<double> ps = {99, 25, 99.9};
  const MetricSummary s = summarize(values, ps);
  EXPECT_DOUBLE_EQ(s.mean, 30.0);
  EXPECT_DOUBLE_EQ(s.median, 30.0);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(200.0));
  ASSERT_EQ(s.percentiles.size(), 3u);
  EXPECT_EQ(s.percentiles[0].first, 99);
  EXPECT_DOUBLE_EQ(s.percentiles[0].second, 49.6);
  EXPECT_DOUBLE_EQ(s.percentiles[1].second, 20.0);
  EXPECT_DOUBLE_EQ(s.percentiles[2].second, 49.96);
}

TEST(MetricSummary, EmptyListIsZeros) {
  const std::vector<double> ps = {50, 99};
  const MetricSummary s = summarize({}, ps);
  EXPECT_EQ(s.mean, 0);
  EXPECT_EQ(s.median, 0);
  EXPECT_EQ(s.std, 0);
  EXPECT_EQ(s.percentiles[1].second, 0);
}

}  // namespace
}  // namespace strata::bench
