// copy_rows on the CPU: each copy moves one whole row, bytewise; other rows stay as they were.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "strata/ops/copy_rows.h"

namespace strata {
namespace {

TEST(CopyRows, EachCopyMovesOneRowAndNothingElseChanges) {
  std::vector<float> src = {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32};  // [4, 3]
  std::vector<float> dst(9, -1.f);                                          // [3, 3]
  const std::vector<ops::RowCopy> copies = {{.src_row = 3, .dst_row = 0}, {.src_row = 1, .dst_row = 2}};
  ops::copy_rows(Tensor::view(dst.data(), DType::kF32, {3, 3}), Tensor::view(src.data(), DType::kF32, {4, 3}), copies);
  EXPECT_EQ(dst, (std::vector<float>{30, 31, 32, -1, -1, -1, 10, 11, 12}));
}

// The bytes move as they are: f16 rows of 4 values are rows of 8 bytes like i32 rows of 2.
TEST(CopyRows, RowsOfEqualBytesCopyAcrossDtypes) {
  std::vector<uint16_t> src = {1, 2, 3, 4, 5, 6, 7, 8};  // [2, 4] f16 bits
  std::vector<int32_t> dst(4, 0);                         // [2, 2]
  const std::vector<ops::RowCopy> copies = {{.src_row = 1, .dst_row = 0}};
  ops::copy_rows(Tensor::view(dst.data(), DType::kI32, {2, 2}), Tensor::view(src.data(), DType::kF16, {2, 4}), copies);
  std::vector<uint16_t> got(4);
  std::memcpy(got.data(), dst.data(), 8);
  EXPECT_EQ(got, (std::vector<uint16_t>{5, 6, 7, 8}));
  EXPECT_EQ(dst[2], 0);
}

}  // namespace
}  // namespace strata
