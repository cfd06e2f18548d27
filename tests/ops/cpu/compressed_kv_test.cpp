// KV window compression against a double reference of transformers' compressor arithmetic:
// non-overlapping windows (HCA), overlapping ones with the previous window's A series (CSA),
// window 0 without a previous window, and slots read from scattered cache rows.
#include "strata/ops/compressed_kv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "test_support.h"

namespace strata {
namespace {

constexpr int64_t kDim = 6, kRate = 4, kRowWidth = 40;

std::vector<double> reference(const Tensor& rows, const std::vector<int32_t>& slots, const Tensor& bias,
                              const Tensor& weight, const ops::CompressedKvParams& p) {
  const int64_t width = p.overlap ? 2 * kDim : kDim;
  std::vector<double> out(kDim);
  for (int64_t c = 0; c < kDim; ++c) {
    std::vector<double> e(slots.size()), v(slots.size());
    double sum = 0;
    for (size_t j = 0; j < slots.size(); ++j) {
      if (slots[j] < 0) continue;
      const int64_t ch = p.overlap && static_cast<int64_t>(j) >= kRate ? kDim + c : c;
      const float* row = rows.data_as<float>() + slots[j] * kRowWidth;
      sum += e[j] = std::exp(row[p.gate_offset + ch] + bias.data_as<float>()[(j % kRate) * width + ch]);
      v[j] = row[p.kv_offset + ch];
    }
    for (size_t j = 0; j < slots.size(); ++j) out[c] += e[j] / sum * v[j];
  }
  double ms = 0;
  for (double x : out) ms += x * x;
  const double inv = 1.0 / std::sqrt(ms / kDim + p.eps);
  for (int64_t c = 0; c < kDim; ++c) out[c] *= inv * weight.data_as<float>()[c];
  return out;
}

void check(bool overlap, const std::vector<std::vector<int32_t>>& windows) {
  const ops::CompressedKvParams p{.head_dim = kDim, .rate = kRate, .overlap = overlap, .kv_offset = 3,
                                  .gate_offset = 3 + 2 * kDim, .eps = 1e-6f};
  const int64_t width = overlap ? 2 * kDim : kDim;
  const Tensor rows = test::random_f32({20, kRowWidth}, 81, -2.f, 2.f);
  const Tensor bias = test::random_f32({kRate, width}, 82), weight = test::random_f32({kDim}, 83, 0.5f, 1.5f);
  const int64_t num = static_cast<int64_t>(windows.size()), places = windows[0].size();
  Tensor slots = Tensor::host(DType::kI32, {num, places}), out = Tensor::host(DType::kF32, {num, kDim});
  for (int64_t e = 0; e < num; ++e)
    for (int64_t j = 0; j < places; ++j) slots.data_as<int32_t>()[e * places + j] = windows[e][j];
  ops::compress_kv_windows(rows, slots, bias, weight, p, out);
  for (int64_t e = 0; e < num; ++e) {
    const std::vector<double> ref = reference(rows, windows[e], bias, weight, p);
    for (int64_t c = 0; c < kDim; ++c) EXPECT_NEAR(out.data_as<float>()[e * kDim + c], ref[c], 2e-6) << e << "," << c;
  }
}

TEST(CompressedKvOp, NonOverlappingWindowsPoolTheirOwnTokens) {
  check(false, {{0, 1, 2, 3}, {7, 5, 19, 4}});
}

TEST(CompressedKvOp, OverlappingWindowsPoolThePreviousWindowsFirstSeries) {
  check(true, {{-1, -1, -1, -1, 0, 1, 2, 3}, {0, 1, 2, 3, 11, 9, 17, 6}});
}

TEST(CompressedKvOp, StoreRowPartWritesOnlyItsColumnsOfTheNamedSlots) {
  Tensor rows = test::random_f32({5, 7}, 87);
  const Tensor before = test::random_f32({5, 7}, 88);
  std::copy_n(rows.data_as<float>(), 35, before.data_as<float>());
  const Tensor src = test::random_f32({3, 2}, 89);
  Tensor slots = Tensor::host(DType::kI32, {3});
  const int32_t values[] = {4, -1, 1};
  std::copy(std::begin(values), std::end(values), slots.data_as<int32_t>());
  ops::store_row_part(src, slots, 3, rows);
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 7; ++c) {
      const int64_t i = r == 4 ? 0 : r == 1 ? 2 : -1;
      const bool written = i >= 0 && c >= 3 && c < 5;
      EXPECT_EQ(rows.data_as<float>()[r * 7 + c],
                written ? src.data_as<float>()[i * 2 + c - 3] : before.data_as<float>()[r * 7 + c]) << r << "," << c;
    }
}

}  // namespace
}  // namespace strata
