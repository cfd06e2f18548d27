// Where each patch of one image sits, as the Qwen-VL vision towers read it: patches come in the
// processor's merge-block order (merge x merge blocks, row-major, then the blocks row-major), so
// a patch's (row, col) on the grid is decoded from its index. From (row, col): the 2-D rotary
// positions and the 4 bilinear taps (align_corners) into the learned side x side position table.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace strata {

struct VisionGrid {
  std::vector<int32_t> rows, cols;  // [P] each patch's grid row and column
  std::vector<int32_t> taps;        // [P, 4] rows of the position table
  std::vector<float> tap_weights;   // [P, 4] bilinear weights
  std::vector<int32_t> cu_seqlens;  // [t + 1] one attention segment per frame
};

// grid_thw: patches (frames, rows, cols); rows and cols divisible by merge; side >= 1.
VisionGrid vision_grid(const std::array<int32_t, 3>& grid_thw, int32_t merge, int32_t side);

}  // namespace strata
