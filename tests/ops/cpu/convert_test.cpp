// The CPU conversions' vector paths against the scalar ones they must match bit for bit: bf16
// narrowing of random bit patterns and of the edge cases (ties, NaNs, infinities, denormals).
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "strata/ops/cpu/convert.h"

namespace strata::cpu {
namespace {

float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

TEST(CpuConvert, NarrowingToBf16RoundsAsTheScalarConversion) {
  std::vector<float> values = {0.f, -0.f, 1.f, -1.f, std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::max(),
                               -std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                               from_bits(0x7f7fffff), from_bits(0x7fc00000), from_bits(0xffc00001),
                               from_bits(0x7f800001), from_bits(0xff800001), from_bits(0x3f808000),
                               from_bits(0x3f818000), from_bits(0x3f808001), from_bits(0x00008000)};
  std::mt19937 rng(11);
  for (int i = 0; i < (1 << 20); ++i) values.push_back(from_bits(static_cast<uint32_t>(rng())));
  values.push_back(1.5f);  // a length that leaves a scalar tail
  std::vector<uint16_t> got(values.size());
  narrow_from_f32(values.data(), DType::kBF16, static_cast<int64_t>(values.size()), got.data());
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    ASSERT_EQ(got[i], f32_to_bf16(values[i])) << std::hex << "f32 bits 0x" << bits;
  }
}

}  // namespace
}  // namespace strata::cpu
