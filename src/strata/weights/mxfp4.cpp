#include "strata/weights/mxfp4.h"

#include <cmath>

namespace strata {
namespace {

constexpr float kFp4Values[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                                  -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

}  // namespace

void dequantize_mxfp4_row(const uint8_t* blocks, const uint8_t* scales, int64_t num_groups, float* out) {
  for (int64_t g = 0; g < num_groups; ++g) {
    const int exponent = static_cast<int>(scales[g]) - 127;
    for (int i = 0; i < 16; ++i) {
      const uint8_t byte = blocks[g * 16 + i];
      out[g * 32 + 2 * i] = std::ldexp(kFp4Values[byte & 0x0F], exponent);
      out[g * 32 + 2 * i + 1] = std::ldexp(kFp4Values[byte >> 4], exponent);
    }
  }
}

}  // namespace strata
