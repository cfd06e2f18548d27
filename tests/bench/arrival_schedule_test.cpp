#include "strata/bench/arrival_schedule.h"

#include <gtest/gtest.h>

#include <cmath>

#include "strata/core/error.h"

namespace strata::bench {
namespace {

TEST(ArrivalSchedule, InfiniteRateSendsEverythingAtOnce) {
  const std::vector<double> t = arrival_offsets_s({.num_requests = 5, .request_rate = INFINITY, .seed = 1});
  EXPECT_EQ(t, std::vector<double>(5, 0.0));
}

TEST(ArrivalSchedule, SeededNonDecreasingAndEndsAtNumOverRate) {
  const ArrivalOptions options{.num_requests = 50, .request_rate = 4.0, .burstiness = 1.0, .seed = 7};
  const std::vector<double> t = arrival_offsets_s(options);
  ASSERT_EQ(t.size(), 50u);
  EXPECT_GT(t[0], 0.0);
  for (size_t i = 1; i < t.size(); ++i) EXPECT_LE(t[i - 1], t[i]);
  EXPECT_NEAR(t.back(), 50 / 4.0, 1e-12);
  EXPECT_EQ(arrival_offsets_s(options), t);  // the same seed, the same schedule
  EXPECT_NE(arrival_offsets_s({.num_requests = 50, .request_rate = 4.0, .seed = 8}), t);
}

// Squared coefficient of variation of the gaps: 1 for Poisson (exponential gaps), 1 / shape
// for gamma gaps; rescaling the schedule leaves it unchanged.
double gap_cv2(double burstiness) {
  const std::vector<double> t =
      arrival_offsets_s({.num_requests = 40000, .request_rate = 10.0, .burstiness = burstiness, .seed = 3});
  double sum = 0, squares = 0, prev = 0;
  for (double x : t) {
    sum += x - prev;
    squares += (x - prev) * (x - prev);
    prev = x;
  }
  const double n = static_cast<double>(t.size()), mean = sum / n;
  return (squares / n - mean * mean) / (mean * mean);
}

TEST(ArrivalSchedule, BurstinessShapesTheGaps) {
  EXPECT_NEAR(gap_cv2(1.0), 1.0, 0.05);
  EXPECT_NEAR(gap_cv2(4.0), 0.25, 0.02);
  EXPECT_NEAR(gap_cv2(0.5), 2.0, 0.15);
}

TEST(ArrivalSchedule, RefusesANonPositiveRate) {
  EXPECT_THROW(arrival_offsets_s({.num_requests = 3, .request_rate = 0}), Error);
  EXPECT_THROW(arrival_offsets_s({.num_requests = 3, .request_rate = 1, .burstiness = 0}), Error);
}

}  // namespace
}  // namespace strata::bench
