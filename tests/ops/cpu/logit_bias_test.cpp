// add_logit_bias on the CPU: each (row, token) entry adds its bias once; entries outside the
// logits are skipped.
#include <gtest/gtest.h>

#include <vector>

#include "strata/ops/logit_bias.h"

namespace strata {
namespace {

TEST(LogitBias, AddsEachEntryToItsRowAndToken) {
  std::vector<float> logits(2 * 5, 1.0f);  // [2, 5]
  std::vector<int32_t> targets = {0, 1, 1, 4, 1, 0, 2, 3, 0, 7, -1, 2};  // the last three pairs are outside
  std::vector<float> biases = {-100.0f, 50.0f, 0.5f, 9.0f, 9.0f, 9.0f};
  ops::add_logit_bias(Tensor::view(logits.data(), DType::kF32, {2, 5}),
                      Tensor::view(targets.data(), DType::kI32, {6, 2}), Tensor::view(biases.data(), DType::kF32, {6}));
  const std::vector<float> expected = {1, -99, 1, 1, 1, 1.5f, 1, 1, 1, 51};
  EXPECT_EQ(logits, expected);
}

}  // namespace
}  // namespace strata
