// Block-quantized rows between the host layout (block after block) and the device layout (a
// row's codes, then its scales): every byte lands where the kernels read it, and back.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "strata/weights/dequantize.h"
#include "strata/weights/device_layout.h"
#include "strata/weights/quant_blocks.h"

namespace strata::test {
namespace {

TEST(DeviceLayout, Fp8PutsCodesThenScalesAndComesBack) {
  const int64_t rows = 3, k = 384, blocks = k / kFp8Block, row_bytes = blocks * 132;
  std::vector<BlockF8B128> host(static_cast<size_t>(rows * blocks));
  for (size_t i = 0; i < host.size(); ++i) {
    for (int j = 0; j < kFp8Block; ++j) host[i].qs[j] = static_cast<uint8_t>((i * 131 + j * 7) % 251);
    host[i].d = 0.25f + static_cast<float>(i);
  }
  std::vector<uint8_t> device(static_cast<size_t>(rows * row_bytes), 0xee), back(device.size(), 0xdd);
  to_device_layout(DType::kF8_E4M3_B128, host.data(), rows, k, device.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      const BlockF8B128& block = host[static_cast<size_t>(r * blocks + b)];
      EXPECT_EQ(std::memcmp(device.data() + r * row_bytes + b * kFp8Block, block.qs, kFp8Block), 0) << r << " " << b;
      float scale = 0.f;
      std::memcpy(&scale, device.data() + r * row_bytes + k + 4 * b, 4);
      EXPECT_EQ(scale, block.d) << r << " " << b;
    }
  from_device_layout(DType::kF8_E4M3_B128, device.data(), rows, k, back.data());
  EXPECT_EQ(std::memcmp(back.data(), host.data(), back.size()), 0);
}

TEST(DeviceLayout, Q8_0PutsCodesThenF16ScalesAndComesBack) {
  const int64_t rows = 2, k = 96, blocks = k / kQk, row_bytes = blocks * 34;
  std::vector<BlockQ8_0> host(static_cast<size_t>(rows * blocks));
  for (size_t i = 0; i < host.size(); ++i) {
    host[i].d = static_cast<uint16_t>(0x3c00 + i);
    for (int j = 0; j < kQk; ++j) host[i].qs[j] = static_cast<int8_t>(static_cast<int>((i * 37 + j * 5) % 256) - 128);
  }
  std::vector<uint8_t> device(static_cast<size_t>(rows * row_bytes), 0xee), back(device.size(), 0xdd);
  to_device_layout(DType::kQ8_0, host.data(), rows, k, device.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      const BlockQ8_0& block = host[static_cast<size_t>(r * blocks + b)];
      EXPECT_EQ(std::memcmp(device.data() + r * row_bytes + b * kQk, block.qs, kQk), 0) << r << " " << b;
      uint16_t scale = 0;
      std::memcpy(&scale, device.data() + r * row_bytes + k + 2 * b, 2);
      EXPECT_EQ(scale, block.d) << r << " " << b;
    }
  from_device_layout(DType::kQ8_0, device.data(), rows, k, back.data());
  EXPECT_EQ(std::memcmp(back.data(), host.data(), back.size()), 0);
}

// Random k-quant blocks (any bytes are valid codes and scales; f16 scales kept small and finite).
template <typename Block>
std::vector<Block> random_k_blocks(int64_t count, uint64_t seed) {
  std::vector<Block> blocks(static_cast<size_t>(count));
  auto* bytes = reinterpret_cast<uint8_t*>(blocks.data());
  for (size_t i = 0; i < blocks.size() * sizeof(Block); ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    bytes[i] = static_cast<uint8_t>(seed >> 56);
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    if constexpr (std::is_same_v<Block, BlockQ4_K> || std::is_same_v<Block, BlockQ5_K>) {
      blocks[i].d = static_cast<uint16_t>(0x1c00 + i % 64);
      blocks[i].dmin = static_cast<uint16_t>(0x1800 + i % 32);
    } else if constexpr (std::is_same_v<Block, BlockQ4_1> || std::is_same_v<Block, BlockQ5_1>) {
      blocks[i].d = static_cast<uint16_t>(0x1c00 + i % 64);
      blocks[i].m = static_cast<uint16_t>(0x9800 + i % 32);  // negative minimums, as real weights have
    } else {
      blocks[i].d = static_cast<uint16_t>(0x1c00 + i % 64);
    }
  }
  return blocks;
}

// Value c of a device-layout row, read as device_layout.cpp documents it (and the kernels do).
float q4k_device_value(const uint8_t* row, int64_t k, int64_t c) {
  const int64_t u = c / 128;
  const int v = static_cast<int>(c % 128), step = v / 16, lane = (v % 16) / 4;
  const int q = (row[64 * u + 16 * lane + 4 * (step / 2) + v % 4] >> (4 * (step % 2))) & 15;
  const uint8_t* header = row + k / 2 + 16 * (u / 2);
  uint8_t sc = 0, m = 0;
  unpack_scale_min_k4(4 * static_cast<int>(u % 2) + step / 2, header + 4, &sc, &m);
  uint16_t d = 0, dmin = 0;
  std::memcpy(&d, header, 2);
  std::memcpy(&dmin, header + 2, 2);
  return f16_to_f32(d) * sc * static_cast<float>(q) - f16_to_f32(dmin) * m;
}

// Q5_K: Q4_K's nibbles and headers with the fifth bits between them.
float q5k_device_value(const uint8_t* row, int64_t k, int64_t c) {
  const int64_t u = c / 128;
  const int v = static_cast<int>(c % 128), step = v / 16, lane = (v % 16) / 4;
  const int low = (row[64 * u + 16 * lane + 4 * (step / 2) + v % 4] >> (4 * (step % 2))) & 15;
  const int fifth = (row[k / 2 + 16 * u + 4 * lane + v % 4] >> step) & 1;
  const uint8_t* header = row + k / 2 + k / 8 + 16 * (u / 2);
  uint8_t sc = 0, m = 0;
  unpack_scale_min_k4(4 * static_cast<int>(u % 2) + step / 2, header + 4, &sc, &m);
  uint16_t d = 0, dmin = 0;
  std::memcpy(&d, header, 2);
  std::memcpy(&dmin, header + 2, 2);
  return f16_to_f32(d) * sc * static_cast<float>(low | (fifth << 4)) - f16_to_f32(dmin) * m;
}

float q6k_device_value(const uint8_t* row, int64_t k, int64_t c) {
  const int64_t u = c / 128;
  const int v = static_cast<int>(c % 128), step = v / 16, lane = (v % 16) / 4;
  const uint8_t* unit = row + 96 * u;
  const int low = (unit[16 * lane + 4 * (step / 2) + v % 4] >> (4 * (step % 2))) & 15;
  const int high = (unit[64 + 8 * lane + 4 * (step / 4) + v % 4] >> (2 * (step % 4))) & 3;
  const uint8_t* scales = row + k * 3 / 4;
  uint16_t d = 0;
  std::memcpy(&d, scales + k / 16 + 2 * (u / 2), 2);
  return f16_to_f32(d) * static_cast<int8_t>(scales[8 * u + step]) * static_cast<float>((low | (high << 4)) - 32);
}

// Q4_0 / Q4_1 / Q5_0 / Q5_1: the k-quants' nibbles (and Q5 fifth bits), then a d (and m) per 32.
template <bool kFive, bool kMin>
float legacy_device_value(const uint8_t* row, int64_t k, int64_t c) {
  const int64_t u = c / 128;
  const int v = static_cast<int>(c % 128), step = v / 16, lane = (v % 16) / 4;
  int q = (row[64 * u + 16 * lane + 4 * (step / 2) + v % 4] >> (4 * (step % 2))) & 15;
  if (kFive) q |= ((row[k / 2 + 16 * u + 4 * lane + v % 4] >> step) & 1) << 4;
  const uint8_t* header = row + k / 2 + (kFive ? k / 8 : 0) + (kMin ? 4 : 2) * (c / kQk);
  uint16_t d = 0, m = 0;
  std::memcpy(&d, header, 2);
  if (kMin) std::memcpy(&m, header + 2, 2);
  if (kMin) return static_cast<float>(q) * f16_to_f32(d) + f16_to_f32(m);
  return static_cast<float>(q - (kFive ? 16 : 8)) * f16_to_f32(d);
}

template <typename Block, int64_t kValues = kQkK>
void expect_k_layout_round_trip(DType dtype, float (*device_value)(const uint8_t*, int64_t, int64_t)) {
  const int64_t rows = 3, k = 512, row_bytes = k / kValues * static_cast<int64_t>(sizeof(Block));
  const std::vector<Block> host = random_k_blocks<Block>(rows * k / kValues, 77);
  std::vector<uint8_t> device(static_cast<size_t>(rows * row_bytes), 0xee), back(device.size(), 0xdd);
  to_device_layout(dtype, host.data(), rows, k, device.data());
  std::vector<float> expected(static_cast<size_t>(k));
  for (int64_t r = 0; r < rows; ++r) {
    dequantize_row(dtype, reinterpret_cast<const char*>(host.data()) + r * row_bytes, expected.data(), k);
    for (int64_t c = 0; c < k; ++c)
      ASSERT_EQ(device_value(device.data() + r * row_bytes, k, c), expected[static_cast<size_t>(c)]) << r << " " << c;
  }
  from_device_layout(dtype, device.data(), rows, k, back.data());
  EXPECT_EQ(std::memcmp(back.data(), host.data(), back.size()), 0);
}

TEST(DeviceLayout, Q4_KValuesReadWhereTheKernelLooksAndComeBack) {
  expect_k_layout_round_trip<BlockQ4_K>(DType::kQ4_K, q4k_device_value);
}

TEST(DeviceLayout, Q5_KValuesReadWhereTheKernelLooksAndComeBack) {
  expect_k_layout_round_trip<BlockQ5_K>(DType::kQ5_K, q5k_device_value);
}

TEST(DeviceLayout, Q6_KValuesReadWhereTheKernelLooksAndComeBack) {
  expect_k_layout_round_trip<BlockQ6_K>(DType::kQ6_K, q6k_device_value);
}

TEST(DeviceLayout, Q4_0ValuesReadWhereTheKernelLooksAndComeBack) {
  expect_k_layout_round_trip<BlockQ4_0, kQk>(DType::kQ4_0, legacy_device_value<false, false>);
}

TEST(DeviceLayout, Q4_1ValuesReadWhereTheKernelLooksAndComeBack) {
  expect_k_layout_round_trip<BlockQ4_1, kQk>(DType::kQ4_1, legacy_device_value<false, true>);
}

TEST(DeviceLayout, Q5_0ValuesReadWhereTheKernelLooksAndComeBack) {
  expect_k_layout_round_trip<BlockQ5_0, kQk>(DType::kQ5_0, legacy_device_value<true, false>);
}

TEST(DeviceLayout, Q5_1ValuesReadWhereTheKernelLooksAndComeBack) {
  expect_k_layout_round_trip<BlockQ5_1, kQk>(DType::kQ5_1, legacy_device_value<true, true>);
}

TEST(DeviceLayout, RowsStayQuantizedOnTheGpuOnlyInWholeUnits) {
  EXPECT_TRUE(keeps_device_layout(DType::kQ6_K, 4096));
  EXPECT_TRUE(keeps_device_layout(DType::kQ6_K, 14336));
  EXPECT_FALSE(keeps_device_layout(DType::kQ6_K, 768));
  EXPECT_TRUE(keeps_device_layout(DType::kQ4_K, 768));
  EXPECT_TRUE(keeps_device_layout(DType::kQ5_K, 768));
  EXPECT_TRUE(keeps_device_layout(DType::kQ4_0, 4096));
  EXPECT_TRUE(keeps_device_layout(DType::kQ5_1, 768));
  EXPECT_FALSE(keeps_device_layout(DType::kQ4_1, 800));  // 25 blocks: not whole 256-value units
  EXPECT_FALSE(keeps_device_layout(DType::kQ8_K, 4096));
}

}  // namespace
}  // namespace strata::test
