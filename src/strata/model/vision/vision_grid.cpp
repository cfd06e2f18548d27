#include "strata/model/vision/vision_grid.h"

#include <algorithm>
#include <cmath>

#include "strata/core/error.h"

namespace strata {
namespace {

// Taps floor(src), floor(src) + 1 (clamped to the table) of target index `i` on an axis of
// `size` mapped onto `side` entries with the corners aligned, in f32 as transformers computes them.
void axis_taps(int32_t i, int32_t size, int32_t side, std::array<int32_t, 2>& taps, std::array<float, 2>& weights) {
  const float src = static_cast<float>(i) * static_cast<float>(side - 1) / static_cast<float>(std::max(size - 1, 1));
  const float floor = std::floor(src);
  for (int o = 0; o < 2; ++o) {
    taps[o] = std::clamp(static_cast<int32_t>(floor) + o, 0, side - 1);
    weights[o] = std::max(0.0f, 1.0f - std::fabs(src - floor - static_cast<float>(o)));
  }
}

}  // namespace

VisionGrid vision_grid(const std::array<int32_t, 3>& grid_thw, int32_t merge, int32_t side) {
  const auto [t, h, w] = grid_thw;
  if (t < 1 || h < merge || w < merge || h % merge != 0 || w % merge != 0)
    fail("image grid {}x{}x{} patches: rows and columns must be positive multiples of the merge size {}", t, h, w,
         merge);
  VisionGrid grid;
  for (int32_t frame = 0; frame <= t; ++frame) grid.cu_seqlens.push_back(frame * h * w);
  for (int32_t frame = 0; frame < t; ++frame) {
    for (int32_t within = 0; within < h * w; ++within) {
      const int32_t in_col = within % merge, in_row = within / merge % merge;
      const int32_t block_col = within / (merge * merge) % (w / merge), block_row = within / (merge * merge * (w / merge));
      const int32_t row = block_row * merge + in_row, col = block_col * merge + in_col;
      grid.rows.push_back(row);
      grid.cols.push_back(col);
      std::array<int32_t, 2> row_taps, col_taps;
      std::array<float, 2> row_weights, col_weights;
      axis_taps(row, h, side, row_taps, row_weights);
      axis_taps(col, w, side, col_taps, col_weights);
      for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b) {
          grid.taps.push_back(row_taps[a] * side + col_taps[b]);
          grid.tap_weights.push_back(row_weights[a] * col_weights[b]);
        }
    }
  }
  return grid;
}

}  // namespace strata
