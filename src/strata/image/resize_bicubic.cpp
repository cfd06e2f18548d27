#include "strata/image/resize_bicubic.h"

#include <algorithm>
#include <cmath>

#include "strata/core/error.h"

namespace strata {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // Pillow's PRECISION_BITS

double bicubic(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

// Per output index: the first input index and the fixed-point weights of its taps.
struct Taps {
  std::vector<int32_t> first, count;
  std::vector<int32_t> weights;  // [out, ksize]
  int32_t ksize = 0;
};

// Pillow's precompute_coeffs then normalize_coeffs_8bpc.
Taps taps_for(int32_t in_size, int32_t out_size) {
  const double scale = static_cast<double>(in_size) / out_size, filter_scale = std::max(scale, 1.0);
  const double support = 2.0 * filter_scale, inv_filter_scale = 1.0 / filter_scale;
  Taps t{.ksize = static_cast<int32_t>(std::ceil(support)) * 2 + 1};
  t.weights.assign(static_cast<size_t>(out_size) * t.ksize, 0);
  std::vector<double> k(t.ksize);
  for (int32_t xx = 0; xx < out_size; ++xx) {
    const double center = (xx + 0.5) * scale;
    const int32_t xmin = std::max(0, static_cast<int32_t>(center - support + 0.5));
    const int32_t xmax = std::min(in_size, static_cast<int32_t>(center + support + 0.5)) - xmin;
    double total = 0.0;
    for (int32_t x = 0; x < xmax; ++x) total += k[x] = bicubic((x + xmin - center + 0.5) * inv_filter_scale);
    for (int32_t x = 0; x < xmax; ++x) {
      const double w = (total != 0.0 ? k[x] / total : k[x]) * (1 << kPrecisionBits);
      t.weights[static_cast<size_t>(xx) * t.ksize + x] = static_cast<int32_t>(w < 0 ? w - 0.5 : w + 0.5);
    }
    t.first.push_back(xmin);
    t.count.push_back(xmax);
  }
  return t;
}

uint8_t clip8(int64_t sum) { return static_cast<uint8_t>(std::clamp<int64_t>(sum >> kPrecisionBits, 0, 255)); }

// One pass along rows (horizontal) or columns (vertical) of `in` into an image of `out` size.
RgbImage resample(const RgbImage& in, int32_t out_w, int32_t out_h, bool horizontal) {
  const Taps t = horizontal ? taps_for(in.width, out_w) : taps_for(in.height, out_h);
  RgbImage out{.width = out_w, .height = out_h};
  out.pixels.resize(static_cast<size_t>(out_w) * out_h * 3);
  for (int32_t y = 0; y < out_h; ++y)
    for (int32_t x = 0; x < out_w; ++x) {
      const int32_t o = horizontal ? x : y;
      const int32_t* w = &t.weights[static_cast<size_t>(o) * t.ksize];
      for (int c = 0; c < 3; ++c) {
        int64_t sum = 1 << (kPrecisionBits - 1);
        for (int32_t i = 0; i < t.count[o]; ++i)
          sum += static_cast<int64_t>(horizontal ? in.at(y, t.first[o] + i, c) : in.at(t.first[o] + i, x, c)) * w[i];
        out.pixels[(static_cast<size_t>(y) * out_w + x) * 3 + c] = clip8(sum);
      }
    }
  return out;
}

}  // namespace

RgbImage resize_bicubic(const RgbImage& image, int32_t width, int32_t height) {
  if (width < 1 || height < 1) fail("cannot resize an image to {}x{}", width, height);
  // Pillow 13 runs the vertical pass first in some shrinking resizes; this rule (a shrinking height
  // with the smaller intermediate) matched its order on 137 of 143 random shapes, and a wrong order
  // moves a few pixels by a few levels.
  const bool vertical_first = height < image.height &&
                              static_cast<int64_t>(image.width) * height < static_cast<int64_t>(width) * image.height;
  RgbImage out = image;
  if (vertical_first) out = resample(out, image.width, height, /*horizontal=*/false);
  if (width != image.width) out = resample(out, width, out.height, /*horizontal=*/true);
  if (!vertical_first && height != image.height) out = resample(out, width, height, /*horizontal=*/false);
  return out;
}

}  // namespace strata
