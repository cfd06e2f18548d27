// Hand-built blocks of every ggml type with known bytes; expected floats are written out
// from the block definitions (element-indexed, independent of the decoder's loop order).
#include "strata/weights/dequantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "strata/core/error.h"
#include "strata/weights/quant_blocks.h"

namespace strata {
namespace {

constexpr uint16_t kHalfOne = 0x3c00, kHalfHalf = 0x3800, kHalfQuarter = 0x3400,
                   kHalfTwo = 0x4000, kHalfMinusOne = 0xbc00;

// Dequantizes a block stored at an odd address, as blocks are inside GGUF tensors.
template <typename Block> std::vector<float> decode(DType dtype, const Block& block) {
  std::vector<uint8_t> bytes(sizeof(Block) + 1);
  std::memcpy(bytes.data() + 1, &block, sizeof(Block));
  std::vector<float> out(dtype_block_elems(dtype));
  dequantize_row(dtype, bytes.data() + 1, out.data(), static_cast<int64_t>(out.size()));
  return out;
}

TEST(DequantizeTest, Q4_0) {
  BlockQ4_0 b{};
  b.d = kHalfHalf;
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const std::vector<float> y = decode(DType::kQ4_0, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * 0.5f) << j;
    EXPECT_EQ(y[j + 16], (7 - j) * 0.5f) << j;
  }
  EXPECT_EQ(y[0], -4.f);
  EXPECT_EQ(y[16], 3.5f);
}

TEST(DequantizeTest, Q4_1) {
  BlockQ4_1 b{};
  b.d = kHalfQuarter;
  b.m = kHalfMinusOne;
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (3 << 4));
  const std::vector<float> y = decode(DType::kQ4_1, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], j * 0.25f - 1.f) << j;
    EXPECT_EQ(y[j + 16], -0.25f) << j;  // 3 * 0.25 - 1
  }
}

TEST(DequantizeTest, Q5_0) {
  BlockQ5_0 b{};
  b.d = kHalfOne;
  const uint32_t qh = 0x80000001u;  // fifth bit of element 0 and element 31
  std::memcpy(b.qh, &qh, 4);
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | (j << 4));
  const std::vector<float> y = decode(DType::kQ5_0, b);
  EXPECT_EQ(y[0], 0.f);    // (0 | 16) - 16
  EXPECT_EQ(y[31], 15.f);  // (15 | 16) - 16
  for (int j = 1; j < 16; ++j) EXPECT_EQ(y[j], j - 16.f) << j;
  for (int j = 0; j < 15; ++j) EXPECT_EQ(y[16 + j], j - 16.f) << j;
}

TEST(DequantizeTest, Q5_1) {
  BlockQ5_1 b{};
  b.d = kHalfTwo;
  b.m = kHalfHalf;
  const uint32_t qh = 0x0000ffffu;  // fifth bit on the first 16 elements only
  std::memcpy(b.qh, &qh, 4);
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const std::vector<float> y = decode(DType::kQ5_1, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j + 16) * 2.f + 0.5f) << j;
    EXPECT_EQ(y[j + 16], (15 - j) * 2.f + 0.5f) << j;
  }
}

TEST(DequantizeTest, Q8_0) {
  BlockQ8_0 b{};
  b.d = kHalfQuarter;
  for (int j = 0; j < 32; ++j) b.qs[j] = static_cast<int8_t>(j * 8 - 128);
  const std::vector<float> y = decode(DType::kQ8_0, b);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], (j * 8 - 128) * 0.25f) << j;
  EXPECT_EQ(y[0], -32.f);
}

// Twelve scale bytes and the 6-bit (scale, min) pairs they decode to, worked out by hand.
constexpr uint8_t kScalesK[12] = {0xc1, 0x42, 0x03, 0x04, 0x00, 0x45, 0x8a, 0x3f, 0x21, 0x1f, 0x30, 0x0e};
constexpr int kScaleK[8] = {1, 2, 3, 4, 49, 31, 0, 14};
constexpr int kMinK[8] = {0, 5, 10, 63, 2, 17, 35, 0};

TEST(DequantizeTest, ScaleMinK4Unpacking) {
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    unpack_scale_min_k4(j, kScalesK, &sc, &m);
    EXPECT_EQ(sc, kScaleK[j]) << j;
    EXPECT_EQ(m, kMinK[j]) << j;
  }
}

TEST(DequantizeTest, Q4_K) {
  BlockQ4_K b{};
  b.d = kHalfOne;
  b.dmin = kHalfHalf;
  std::memcpy(b.scales, kScalesK, 12);
  for (int i = 0; i < 128; ++i) b.qs[i] = static_cast<uint8_t>((i % 16) | ((15 - i % 16) << 4));
  const std::vector<float> y = decode(DType::kQ4_K, b);
  for (int e = 0; e < 256; ++e) {
    const int chunk = e / 64, high = (e % 64) / 32, l = e % 32, sub = 2 * chunk + high;
    const uint8_t byte = b.qs[32 * chunk + l];
    const int q = high ? byte >> 4 : byte & 15;
    EXPECT_EQ(y[e], 1.f * kScaleK[sub] * q - 0.5f * kMinK[sub]) << e;
  }
  EXPECT_EQ(y[33], 25.5f);    // sub 1: 2 * 14 - 0.5 * 5
  EXPECT_EQ(y[133], 244.f);   // sub 4: 49 * 5 - 0.5 * 2
  EXPECT_EQ(y[223], -17.5f);  // sub 6: 0 * 15 - 0.5 * 35
}

TEST(DequantizeTest, Q5_K) {
  BlockQ5_K b{};
  b.d = kHalfOne;
  b.dmin = kHalfHalf;
  std::memcpy(b.scales, kScalesK, 12);
  for (int i = 0; i < 128; ++i) b.qs[i] = static_cast<uint8_t>((i % 16) | ((15 - i % 16) << 4));
  for (int l = 0; l < 32; ++l) b.qh[l] = (l % 2 == 0) ? 0x55 : 0xaa;  // even l: low halves
  const std::vector<float> y = decode(DType::kQ5_K, b);
  for (int e = 0; e < 256; ++e) {
    const int chunk = e / 64, high = (e % 64) / 32, l = e % 32, sub = 2 * chunk + high;
    const uint8_t byte = b.qs[32 * chunk + l];
    const int fifth = (b.qh[l] >> (2 * chunk + high)) & 1;
    const int q = (high ? byte >> 4 : byte & 15) + 16 * fifth;
    EXPECT_EQ(y[e], 1.f * kScaleK[sub] * q - 0.5f * kMinK[sub]) << e;
  }
  EXPECT_EQ(y[0], 16.f);   // q = 0 + 16, scale 1, min 0
  EXPECT_EQ(y[33], 57.5f); // odd l -> bit 1 set: q = 14 + 16; 2 * 30 - 2.5
}

TEST(DequantizeTest, Q6_K) {
  BlockQ6_K b{};
  b.d = kHalfHalf;
  for (int i = 0; i < 16; ++i) b.scales[i] = static_cast<int8_t>((i % 2 ? -1 : 1) * (i + 1));
  for (int i = 0; i < 128; ++i) b.ql[i] = static_cast<uint8_t>(i * 11);
  for (int i = 0; i < 64; ++i) b.qh[i] = static_cast<uint8_t>(i * 37);
  const std::vector<float> y = decode(DType::kQ6_K, b);
  for (int e = 0; e < 256; ++e) {
    const int half = e / 128, w = e % 128, run = w / 32, l = w % 32;
    const uint8_t low_byte = b.ql[64 * half + l + 32 * (run % 2)];
    const int low = run < 2 ? low_byte & 15 : low_byte >> 4;
    const int top = (b.qh[32 * half + l] >> (2 * run)) & 3;
    const int q = (low | (top << 4)) - 32;
    const int scale = b.scales[8 * half + l / 16 + 2 * run];
    EXPECT_EQ(y[e], 0.5f * scale * q) << e;
  }
  EXPECT_EQ(y[0], -16.f);  // ql 0, qh 0 -> q = -32; scale 1
}

TEST(DequantizeTest, Q8_K) {
  BlockQ8_K b{};
  b.d = 0.125f;
  for (int j = 0; j < 256; ++j) b.qs[j] = static_cast<int8_t>(j - 128);
  const std::vector<float> y = decode(DType::kQ8_K, b);
  for (int j = 0; j < 256; ++j) EXPECT_EQ(y[j], (j - 128) * 0.125f) << j;
}

TEST(DequantizeTest, HalfScalesAreExactF16) {
  // 0x2e66 is the f16 nearest 0.1: 0.0999755859375 exactly; 0x0001 is the smallest
  // subnormal, 2^-24; 0x7bff is the largest finite half, 65504.
  BlockQ8_0 b{};
  b.qs[0] = 3;
  b.d = 0x2e66;
  EXPECT_EQ(decode(DType::kQ8_0, b)[0], 3 * 0.0999755859375f);
  b.d = 0x0001;
  EXPECT_EQ(decode(DType::kQ8_0, b)[0], 3 * std::ldexp(1.f, -24));
  b.d = 0x7bff;
  EXPECT_EQ(decode(DType::kQ8_0, b)[0], 3 * 65504.f);
  b.d = 0xbc00;
  EXPECT_EQ(decode(DType::kQ8_0, b)[0], -3.f);
}

TEST(DequantizeTest, PlainTypes) {
  const uint16_t halves[4] = {0x3c00, 0xc000, 0x7bff, 0x0001};
  float out[4];
  dequantize_row(DType::kF16, halves, out, 4);
  EXPECT_EQ(out[0], 1.f);
  EXPECT_EQ(out[1], -2.f);
  EXPECT_EQ(out[2], 65504.f);
  EXPECT_EQ(out[3], std::ldexp(1.f, -24));
  const uint16_t bf[2] = {0x3f80, 0xc040};
  dequantize_row(DType::kBF16, bf, out, 2);
  EXPECT_EQ(out[0], 1.f);
  EXPECT_EQ(out[1], -3.f);
  const float f[3] = {1.5f, -2.25f, 7.f};
  dequantize_blocks(DType::kF32, f, 1, 2, out);
  EXPECT_EQ(out[0], -2.25f);
  EXPECT_EQ(out[1], 7.f);
}

TEST(DequantizeTest, BlockRangeStartsAtTheRightBlock) {
  BlockQ8_0 blocks[2]{};
  blocks[0].d = kHalfOne;
  blocks[1].d = kHalfTwo;
  for (int j = 0; j < 32; ++j) blocks[1].qs[j] = static_cast<int8_t>(j);
  std::vector<float> out(32);
  dequantize_blocks(DType::kQ8_0, blocks, 1, 1, out.data());
  for (int j = 0; j < 32; ++j) EXPECT_EQ(out[j], 2.f * j);
}

TEST(DequantizeTest, RejectsPartialBlocksAndIntegerTypes) {
  BlockQ8_0 b{};
  float out[32];
  EXPECT_THROW(dequantize_row(DType::kQ8_0, &b, out, 31), Error);
  EXPECT_THROW(dequantize_row(DType::kI32, &b, out, 1), Error);
  EXPECT_FALSE(can_dequantize(DType::kI8));
  EXPECT_TRUE(can_dequantize(DType::kQ6_K));
}

}  // namespace
}  // namespace strata
