// mask_logits on the CPU: cleared bits become -inf, set bits keep their logit.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "strata/ops/logits_mask.h"

namespace strata {
namespace {

TEST(LogitsMask, ClearedBitsBecomeMinusInfinity) {
  std::vector<float> logits = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
                               25, 26, 27, 28, 29, 30, 31, 32, 33, 34};  // [1, 34]: two words of bits
  std::vector<int32_t> rows = {0}, bits = {0b101, 0b10};
  ops::mask_logits(Tensor::view(logits.data(), DType::kF32, {1, 34}), Tensor::view(rows.data(), DType::kI32, {1}),
                   Tensor::view(bits.data(), DType::kI32, {1, 2}));
  for (int v = 0; v < 34; ++v) {
    const bool kept = v == 0 || v == 2 || v == 33;
    if (kept) EXPECT_EQ(logits[v], static_cast<float>(v + 1)) << v;
    else EXPECT_TRUE(std::isinf(logits[v]) && logits[v] < 0) << v;
  }
}

}  // namespace
}  // namespace strata
