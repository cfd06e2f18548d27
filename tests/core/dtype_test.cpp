#include <gtest/gtest.h>

#include <cmath>

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

// Every e4m3fn code against the format's definition, and back: each finite code is the
// nearest e4m3 value of itself; midpoints round to the even code; beyond 448 saturates.
TEST(DType, Fp8E4M3DecodesEveryCodeAndRoundsToNearestEven) {
  EXPECT_EQ(fp8_e4m3_to_f32(0x38), 1.0f);      // exponent 7 = bias
  EXPECT_EQ(fp8_e4m3_to_f32(0x7e), 448.0f);    // largest finite
  EXPECT_EQ(fp8_e4m3_to_f32(0x01), 0x1p-9f);   // smallest subnormal
  EXPECT_EQ(fp8_e4m3_to_f32(0x08), 0x1p-6f);   // smallest normal
  EXPECT_EQ(fp8_e4m3_to_f32(0xb8), -1.0f);
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_f32(0x7f)) && std::isnan(fp8_e4m3_to_f32(0xff)));
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7f) == 0x7f) continue;
    const float v = fp8_e4m3_to_f32(static_cast<uint8_t>(code));
    ASSERT_EQ(f32_to_fp8_e4m3(v), code == 0x80 ? 0x80 : code) << code;
  }
  EXPECT_EQ(f32_to_fp8_e4m3(1.0625f), 0x38);   // halfway 1 and 1.125: to even (1.0)
  EXPECT_EQ(f32_to_fp8_e4m3(1.1875f), 0x3a);   // halfway 1.125 and 1.25: to even (1.25)
  EXPECT_EQ(f32_to_fp8_e4m3(1.07f), 0x39);
  EXPECT_EQ(f32_to_fp8_e4m3(0x1.8p-10f), 0x01);  // 0.75 of the smallest subnormal
  EXPECT_EQ(f32_to_fp8_e4m3(0x1p-10f), 0x00);    // half of it: to even (zero)
  EXPECT_EQ(f32_to_fp8_e4m3(460.f), 0x7e);
  EXPECT_EQ(f32_to_fp8_e4m3(-1e9f), 0xfe);
  EXPECT_EQ(dtype_bytes(DType::kF8_E4M3_B128, 256), 264);
  EXPECT_TRUE(is_quantized(DType::kF8_E4M3_B128));
}

}  // namespace strata
