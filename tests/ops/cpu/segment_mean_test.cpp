// Segment means against a double-precision reference: segments of 1, 4 and 7 rows and an empty one,
// each row of a segment holding the same mean, no row of another segment leaking in.
#include "strata/ops/segment_mean.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace strata {
namespace {

TEST(SegmentMeanOp, EveryRowHoldsItsSegmentsMean) {
  const Tensor x = test::random_f32({12, 20}, 51, -2.f, 2.f);
  std::vector<int32_t> cu = {0, 1, 5, 5, 12};
  Tensor out = Tensor::host(DType::kF32, {12, 20});
  ops::segment_mean(x, Tensor::view(cu.data(), DType::kI32, {5}), out);
  for (size_t r = 0; r + 1 < cu.size(); ++r)
    for (int64_t j = 0; j < 20; ++j) {
      double sum = 0;
      for (int32_t t = cu[r]; t < cu[r + 1]; ++t) sum += x.data_as<float>()[t * 20 + j];
      for (int32_t t = cu[r]; t < cu[r + 1]; ++t)
        ASSERT_NEAR(out.data_as<float>()[t * 20 + j], sum / (cu[r + 1] - cu[r]), 1e-6) << "row " << t << " col " << j;
    }
  EXPECT_EQ(out.data_as<float>()[3], x.data_as<float>()[3]) << "a one-row segment is its row";
}

}  // namespace
}  // namespace strata
