// Block-quantized rows between the host layout (block after block) and the device layout (a
// row's codes, then its scales): every byte lands where the kernels read it, and back.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

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

}  // namespace
}  // namespace strata::test
