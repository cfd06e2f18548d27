// Weighted sums of table rows: exact for weights that are powers of two.
#include <gtest/gtest.h>

#include "strata/ops/embedding_bag.h"
#include "test_support.h"

namespace strata {
namespace {

TEST(EmbeddingBagOp, SumsWeightedRows) {
  const Tensor table = test::random_f32({6, 8}, 41);
  std::vector<int32_t> idx = {0, 5, 2, 2, 3, 1, 4, 0};
  std::vector<float> wts = {0.5f, 0.25f, 0.125f, 0.125f, 1.0f, 0.0f, 0.75f, 0.25f};
  Tensor out = Tensor::host(DType::kF32, {2, 8});
  ops::embedding_bag(table, Tensor::view(idx.data(), DType::kI32, {2, 4}),
                     Tensor::view(wts.data(), DType::kF32, {2, 4}), out);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t i = 0; i < 8; ++i) {
      float ref = 0;
      for (int k = 0; k < 4; ++k) ref += wts[n * 4 + k] * table.data_as<float>()[idx[n * 4 + k] * 8 + i];
      ASSERT_EQ(out.data_as<float>()[n * 8 + i], ref) << n << "," << i;
    }
}

}  // namespace
}  // namespace strata
