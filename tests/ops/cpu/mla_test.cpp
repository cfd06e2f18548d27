// MLA's key/value expansion and head narrowing on the CPU, with exact expected layouts.
#include <gtest/gtest.h>

#include <vector>

#include "strata/ops/mla.h"

namespace strata {
namespace {

TEST(MlaOps, ExpandPutsTheSharedRotaryKeyFirstAndPadsValues) {
  // One token, two heads; nope 2, v 1, rope 2: kv per head [n0, n1, v0].
  std::vector<float> kv = {1, 2, 3, 4, 5, 6}, k_rot = {7, 8}, k(8), v(8);
  ops::mla_expand_kv(Tensor::view(kv.data(), DType::kF32, {1, 2, 3}), Tensor::view(k_rot.data(), DType::kF32, {1, 2}),
                     2, Tensor::view(k.data(), DType::kF32, {1, 2, 4}), Tensor::view(v.data(), DType::kF32, {1, 2, 4}));
  EXPECT_EQ(k, (std::vector<float>{7, 8, 1, 2, 7, 8, 4, 5}));
  EXPECT_EQ(v, (std::vector<float>{3, 0, 0, 0, 6, 0, 0, 0}));
  std::vector<float> narrow(2);
  ops::narrow_heads(Tensor::view(v.data(), DType::kF32, {1, 2, 4}), Tensor::view(narrow.data(), DType::kF32, {1, 2, 1}));
  EXPECT_EQ(narrow, (std::vector<float>{3, 6}));
}

}  // namespace
}  // namespace strata
