// FP8 rows between the host layout (BlockF8B128 after BlockF8B128) and the device layout (a
// row's codes, then its scales): every byte lands where the kernels read it, and back.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "strata/weights/fp8.h"
#include "strata/weights/quant_blocks.h"

namespace strata::test {
namespace {

TEST(Fp8Layout, DeviceLayoutPutsCodesThenScalesAndComesBack) {
  const int64_t rows = 3, k = 384, blocks = k / kFp8Block, row_bytes = blocks * 132;
  std::vector<BlockF8B128> host(static_cast<size_t>(rows * blocks));
  for (size_t i = 0; i < host.size(); ++i) {
    for (int j = 0; j < kFp8Block; ++j) host[i].qs[j] = static_cast<uint8_t>((i * 131 + j * 7) % 251);
    host[i].d = 0.25f + static_cast<float>(i);
  }
  std::vector<uint8_t> device(static_cast<size_t>(rows * row_bytes), 0xee), back(device.size(), 0xdd);
  fp8_b128_to_device_layout(host.data(), rows, k, device.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      const BlockF8B128& block = host[static_cast<size_t>(r * blocks + b)];
      EXPECT_EQ(std::memcmp(device.data() + r * row_bytes + b * kFp8Block, block.qs, kFp8Block), 0) << r << " " << b;
      float scale = 0.f;
      std::memcpy(&scale, device.data() + r * row_bytes + k + 4 * b, 4);
      EXPECT_EQ(scale, block.d) << r << " " << b;
    }
  fp8_b128_from_device_layout(device.data(), rows, k, back.data());
  EXPECT_EQ(std::memcmp(back.data(), host.data(), back.size()), 0);
}

}  // namespace
}  // namespace strata::test
