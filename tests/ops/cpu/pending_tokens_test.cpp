// fill_pending_tokens on the CPU: each pair writes one sampled id, nothing else changes.
#include <gtest/gtest.h>

#include <vector>

#include "strata/ops/pending_tokens.h"

namespace strata {
namespace {

TEST(PendingTokens, EachPairCopiesOneSampledIdAndNothingElseChanges) {
  std::vector<int32_t> sampled = {900, 901, 902, 903};
  std::vector<int32_t> tokens = {10, 11, 12, 13, 14, 15};
  std::vector<int32_t> pairs = {5, 2, 1, 0, 3, 3};
  ops::fill_pending_tokens(Tensor::view(sampled.data(), DType::kI32, {4}),
                           Tensor::view(pairs.data(), DType::kI32, {3, 2}),
                           Tensor::view(tokens.data(), DType::kI32, {6}));
  EXPECT_EQ(tokens, (std::vector<int32_t>{10, 900, 12, 903, 14, 902}));
  ops::fill_pending_tokens(Tensor::view(sampled.data(), DType::kI32, {4}),
                           Tensor::view(pairs.data(), DType::kI32, {0, 2}),
                           Tensor::view(tokens.data(), DType::kI32, {6}));
  EXPECT_EQ(tokens, (std::vector<int32_t>{10, 900, 12, 903, 14, 902}));
}

}  // namespace
}  // namespace strata
