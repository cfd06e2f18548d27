// MXFP4 dequantisation against the values transformers' convert_moe_packed_tensors gives for
// the same bytes (two rows of two groups, scales below and above the bias of 127).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "strata/weights/mxfp4.h"

namespace strata {
namespace {

TEST(Mxfp4, RowsMatchTransformers) {
  const std::vector<uint8_t> blocks = {
      175, 196, 25, 246, 67, 211, 151, 103, 92, 185, 142, 23, 72, 89, 110, 42, 218, 136, 167, 230, 68, 176,
      127, 135, 172, 0, 75, 55, 250, 6, 19, 188, 44, 191, 69, 56, 152, 183, 181, 112, 251, 189, 192, 34, 56,
      201, 206, 38, 4, 238, 137, 87, 227, 195, 72, 83, 176, 1, 192, 144, 118, 159, 93, 172};  // [2 rows, 2 groups, 16]
  const std::vector<uint8_t> scales = {120, 127, 130, 125};  // [2 rows, 2 groups]
  const std::vector<std::vector<float>> expected = {
      {
          -0.046875f, -0.0078125f, 0.015625f, -0.015625f, -0.00390625f, 0.00390625f, 0.03125f, -0.046875f,
          0.01171875f, 0.015625f, 0.01171875f, -0.0234375f, 0.046875f, -0.00390625f, 0.046875f, 0.03125f,
          -0.015625f, 0.0234375f, -0.00390625f, -0.01171875f, -0.03125f, -0.0f, 0.046875f, 0.00390625f, -0.0f,
          0.015625f, -0.00390625f, 0.0234375f, -0.03125f, 0.03125f, -0.0078125f, 0.0078125f, -1.0f, -3.0f,
          -0.0f, -0.0f, 6.0f, -1.0f, 4.0f, -4.0f, 2.0f, 2.0f, 0.0f, -1.5f, -6.0f, 6.0f, 6.0f, -0.0f, -2.0f,
          -1.0f, 0.0f, 0.0f, -1.5f, 2.0f, 6.0f, 1.5f, -1.0f, -6.0f, 4.0f, 0.0f, 1.5f, 0.5f, -2.0f, -1.5f},
      {
          -16.0f, 8.0f, -48.0f, -12.0f, 24.0f, 16.0f, -0.0f, 12.0f, -0.0f, -4.0f, 48.0f, -12.0f, 24.0f,
          -12.0f, 0.0f, 48.0f, -12.0f, -48.0f, -24.0f, -12.0f, 0.0f, -16.0f, 8.0f, 8.0f, -0.0f, 12.0f, -4.0f,
          -16.0f, -32.0f, -16.0f, 32.0f, 8.0f, 0.5f, 0.0f, -1.0f, -1.0f, -0.125f, -0.0f, 1.5f, 0.75f, 0.375f,
          -1.0f, 0.375f, -0.5f, -0.0f, 0.5f, 0.375f, 0.75f, 0.0f, -0.375f, 0.125f, 0.0f, 0.0f, -0.5f, 0.0f,
          -0.125f, 1.0f, 1.5f, -1.5f, -0.125f, -0.75f, 0.75f, -0.5f, -0.25f}};
  for (int row = 0; row < 2; ++row) {
    std::vector<float> out(64);
    dequantize_mxfp4_row(blocks.data() + row * 32, scales.data() + row * 2, 2, out.data());
    EXPECT_EQ(out, expected[row]) << "row " << row;
  }
}

}  // namespace
}  // namespace strata
