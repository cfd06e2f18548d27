// QSA attention over per-token cache rows against a double reference: a prefill chunk after
// cached tokens in scattered paged blocks, grouped query heads, each query seeing its selected
// blocks' tokens and its unfinished tail (none when its own block is complete); and the mean
// pooling of a block's index keys.
#include "strata/ops/block_sparse_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "test_support.h"

namespace strata {
namespace {

constexpr int64_t kHeads = 4, kKvHeads = 2, kDim = 4, kBlock = 4, kRate = 3, kRowWidth = 12, kQueries = 5;
constexpr int64_t kCached = 6;  // queries sit at positions 6..10

Tensor i32(Shape shape, const std::vector<int32_t>& values) {
  Tensor t = Tensor::host(DType::kI32, shape);
  std::copy(values.begin(), values.end(), t.data_as<int32_t>());
  return t;
}

const int32_t kTable[] = {2, 0, 3};  // positions 0-3 in block 2, 4-7 in block 0, 8-11 in block 3

int64_t slot_of(int64_t pos) { return kTable[pos / kBlock] * kBlock + pos % kBlock; }

TEST(BlockSparseAttentionOp, SelectedBlocksAndTheTail) {
  const Tensor k_rows = test::random_f32({4 * kBlock, kRowWidth}, 101), v_rows = test::random_f32({4 * kBlock, kRowWidth}, 102);
  const Tensor q = test::random_f32({kQueries, kHeads, kDim}, 103);
  // Closed blocks per query (positions 6..10): 2, 2, 3, 3, 3; -1 pads.
  const Tensor selected = i32({kQueries, 2}, {1, -1, 0, 1, 2, 0, 1, -1, -1, -1});
  const ops::AttentionMetadata meta{.cu_seqlens = i32({2}, {0, kQueries}), .kv_lens = i32({1}, {kCached + kQueries}),
                                    .block_tables = i32({1, 3}, {2, 0, 3}), .num_rows = 1, .max_q_len = kQueries,
                                    .max_kv_len = kCached + kQueries};
  Tensor out = Tensor::host(DType::kF32, {kQueries, kHeads, kDim});
  ops::block_sparse_attention(q, k_rows, v_rows, meta,
                              {.num_kv_heads = kKvHeads, .head_dim = kDim, .block_size = kBlock, .rate = kRate,
                               .scale = 0.5f, .selected = selected},
                              out);
  for (int64_t t = 0; t < kQueries; ++t) {
    const int64_t pos = kCached + t, closed = (pos + 1) / kRate;
    std::vector<int64_t> seen;
    for (int64_t j = 0; j < 2; ++j)
      if (const int32_t b = selected.data_as<int32_t>()[t * 2 + j]; b >= 0)
        for (int64_t i = 0; i < kRate; ++i) seen.push_back(b * kRate + i);
    for (int64_t p = closed * kRate; p <= pos; ++p) seen.push_back(p);
    for (int64_t h = 0; h < kHeads; ++h) {
      const int64_t kv = h / (kHeads / kKvHeads);
      std::vector<double> e;
      double sum = 0;
      for (int64_t p : seen) {
        double dot = 0;
        for (int64_t i = 0; i < kDim; ++i)
          dot += q.data_as<float>()[(t * kHeads + h) * kDim + i] *
                 k_rows.data_as<float>()[slot_of(p) * kRowWidth + kv * kDim + i];
        sum += e.emplace_back(std::exp(0.5 * dot));
      }
      for (int64_t i = 0; i < kDim; ++i) {
        double ref = 0;
        for (size_t j = 0; j < seen.size(); ++j)
          ref += e[j] / sum * v_rows.data_as<float>()[slot_of(seen[j]) * kRowWidth + kv * kDim + i];
        EXPECT_NEAR(out.data_as<float>()[(t * kHeads + h) * kDim + i], ref, 1e-5) << t << " " << h;
      }
    }
  }
}

TEST(BlockSparseAttentionOp, MeanRowWindowsPoolsAColumnRange) {
  const Tensor rows = test::random_f32({8, kRowWidth}, 104);
  const Tensor windows = i32({2, 3}, {5, 0, 7, 2, 3, 1});
  Tensor out = Tensor::host(DType::kF32, {2, 4});
  ops::mean_row_windows(rows, windows, 8, out);
  for (int64_t e = 0; e < 2; ++e)
    for (int64_t i = 0; i < 4; ++i) {
      double mean = 0;
      for (int64_t j = 0; j < 3; ++j)
        mean += rows.data_as<float>()[windows.data_as<int32_t>()[e * 3 + j] * kRowWidth + 8 + i] / 3;
      EXPECT_NEAR(out.data_as<float>()[e * 4 + i], mean, 1e-6);
    }
}

}  // namespace
}  // namespace strata
