#include <gtest/gtest.h>

#include "strata/core/dtype.h"

namespace strata {

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  // 1 + 2^-8 is exactly halfway between two bf16 values: ties go to even (1.0).
  EXPECT_EQ(f32_to_bf16(1.00390625f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(1.01171875f), 0x3f82);
}

TEST(DType, F16RoundTripsEveryFiniteValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if (((h >> 10) & 0x1f) == 0x1f) continue;  // inf / nan
    const float f = f16_to_f32(static_cast<uint16_t>(h));
    ASSERT_EQ(f32_to_f16(f), static_cast<uint16_t>(h)) << h;
  }
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0x0001), 5.960464477539063e-08f);
}

TEST(DType, BlockSizes) {
  EXPECT_EQ(dtype_bytes(DType::kBF16, 10), 20);
  EXPECT_EQ(dtype_bytes(DType::kQ4_K, 512), 288);
  EXPECT_EQ(dtype_bytes(DType::kQ8_0, 64), 68);
  EXPECT_TRUE(is_quantized(DType::kQ6_K));
  EXPECT_FALSE(is_quantized(DType::kF16));
}

}  // namespace strata
