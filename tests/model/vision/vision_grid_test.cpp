// Patch grid positions in merge-block order and the bilinear taps into the position table,
// written out by hand for small grids.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/model/vision/vision_grid.h"

namespace strata {
namespace {

TEST(VisionGrid, PatchesComeInMergeBlockOrder) {
  const VisionGrid g = vision_grid({1, 2, 4}, 2, 4);
  // Block (0, 0) holds (0,0) (0,1) (1,0) (1,1); block (0, 1) holds columns 2 and 3.
  EXPECT_EQ(g.rows, (std::vector<int32_t>{0, 0, 1, 1, 0, 0, 1, 1}));
  EXPECT_EQ(g.cols, (std::vector<int32_t>{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(g.cu_seqlens, (std::vector<int32_t>{0, 8}));
  EXPECT_EQ(vision_grid({2, 2, 2}, 2, 4).cu_seqlens, (std::vector<int32_t>{0, 4, 8}));  // a segment per frame
}

TEST(VisionGrid, BilinearTapsAlignCorners) {
  // 6 rows onto a table side of 4: row r sits at r * 3 / 5; 2 columns at 0 and 3.
  const VisionGrid g = vision_grid({1, 6, 2}, 2, 4);
  // Patch 2 is (row 1, col 0): row src 0.6 -> rows 0, 1 weights 0.4, 0.6; col src 0 -> 0, 1 weights 1, 0.
  EXPECT_EQ(std::vector<int32_t>(g.taps.begin() + 8, g.taps.begin() + 12), (std::vector<int32_t>{0, 1, 4, 5}));
  const std::vector<float> expected = {0.4f, 0.0f, 0.6f, 0.0f};
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(g.tap_weights[8 + k], expected[k], 1e-6f) << k;
  // Patch 3 is (row 1, col 1): col src 3 -> taps 3 and 4 clamped to 3, weights 1 and 0.
  EXPECT_EQ(std::vector<int32_t>(g.taps.begin() + 12, g.taps.begin() + 16), (std::vector<int32_t>{3, 3, 7, 7}));
}

TEST(VisionGrid, GridsThatDoNotMergeAreRefused) {
  EXPECT_THROW(vision_grid({1, 3, 4}, 2, 4), Error);
  EXPECT_THROW(vision_grid({0, 2, 2}, 2, 4), Error);
}

}  // namespace
}  // namespace strata
