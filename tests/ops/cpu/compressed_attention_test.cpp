// DeepSeek-V4 attention and indexer selection over per-token cache rows, against double
// references: two rows of a step (a prefill chunk after cached tokens, and a decode), keys from
// scattered blocks, the sliding window, every closed entry (HCA) or the selected ones (CSA), sinks.
#include "strata/ops/compressed_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "test_support.h"

namespace strata {
namespace {

constexpr int64_t kHeads = 2, kDim = 8, kBlock = 4, kWindow = 3, kRate = 4, kEntryOffset = 10, kRowWidth = 20;

struct Step {
  Tensor cu = Tensor::host(DType::kI32, {3}), kv_lens = Tensor::host(DType::kI32, {2});
  Tensor tables = Tensor::host(DType::kI32, {2, 5});
  std::vector<int64_t> positions;  // per query
  std::vector<int64_t> row_of;

  // Row 0: 6 queries after 7 cached tokens (kv_len 13); row 1: 1 query at position 17.
  Step() {
    const int32_t cu_v[] = {0, 6, 7}, kv_v[] = {13, 18}, tables_v[] = {3, 0, 5, 1, -1, 2, 7, 4, 6, 8};
    std::copy(std::begin(cu_v), std::end(cu_v), cu.data_as<int32_t>());
    std::copy(std::begin(kv_v), std::end(kv_v), kv_lens.data_as<int32_t>());
    std::copy(std::begin(tables_v), std::end(tables_v), tables.data_as<int32_t>());
    for (int64_t p = 7; p < 13; ++p) positions.push_back(p), row_of.push_back(0);
    positions.push_back(17), row_of.push_back(1);
  }
  ops::AttentionMetadata meta() const {
    return {.cu_seqlens = cu, .kv_lens = kv_lens, .block_tables = tables, .num_rows = 2, .max_q_len = 6, .max_kv_len = 18};
  }
  const float* row(const Tensor& rows, int64_t t, int64_t pos) const {
    const int32_t block = tables.data_as<int32_t>()[row_of[t] * 5 + pos / kBlock];
    return rows.data_as<float>() + (block * kBlock + pos % kBlock) * kRowWidth;
  }
};

std::vector<double> reference(const Step& s, const Tensor& rows, const Tensor& q, const Tensor& sinks, int64_t t,
                              int64_t h, const std::vector<int64_t>& entries) {
  std::vector<const float*> keys;
  for (int64_t p = std::max<int64_t>(0, s.positions[t] - kWindow + 1); p <= s.positions[t]; ++p) keys.push_back(s.row(rows, t, p));
  for (int64_t w : entries) keys.push_back(s.row(rows, t, w * kRate + kRate - 1) + kEntryOffset);
  std::vector<double> e;
  double sum = std::exp(sinks.data_as<float>()[h]);
  for (const float* k : keys) {
    double dot = 0;
    for (int64_t i = 0; i < kDim; ++i) dot += q.data_as<float>()[(t * kHeads + h) * kDim + i] * k[i];
    sum += e.emplace_back(std::exp(dot * 0.3));
  }
  std::vector<double> out(kDim);
  for (size_t j = 0; j < keys.size(); ++j)
    for (int64_t i = 0; i < kDim; ++i) out[i] += e[j] / sum * keys[j][i];
  return out;
}

void check_attention(const Tensor& selected) {
  const Step s;
  const Tensor rows = test::random_f32({9 * kBlock, kRowWidth}, 91), q = test::random_f32({7, kHeads, kDim}, 92);
  const Tensor sinks = test::random_f32({kHeads}, 93);
  Tensor out = Tensor::host(DType::kF32, {7, kHeads, kDim});
  ops::compressed_attention(q, rows, s.meta(),
                            {.head_dim = kDim, .block_size = kBlock, .sliding_window = kWindow, .rate = kRate,
                             .entry_offset = kEntryOffset, .scale = 0.3f, .sinks = sinks, .selected = selected},
                            out);
  for (int64_t t = 0; t < 7; ++t) {
    std::vector<int64_t> entries;
    if (!selected.defined()) {
      for (int64_t w = 0; w < (s.positions[t] + 1) / kRate; ++w) entries.push_back(w);
    } else {
      for (int64_t j = 0; j < selected.dim(1); ++j)
        if (selected.data_as<int32_t>()[t * selected.dim(1) + j] >= 0) entries.push_back(selected.data_as<int32_t>()[t * selected.dim(1) + j]);
    }
    for (int64_t h = 0; h < kHeads; ++h) {
      const std::vector<double> ref = reference(s, rows, q, sinks, t, h, entries);
      for (int64_t i = 0; i < kDim; ++i)
        EXPECT_NEAR(out.data_as<float>()[(t * kHeads + h) * kDim + i], ref[i], 1e-5) << t << "," << h << "," << i;
    }
  }
}

TEST(CompressedAttentionOp, SlidingWindowAndEveryClosedEntry) { check_attention(Tensor()); }

TEST(CompressedAttentionOp, SlidingWindowAndSelectedEntries) {
  Tensor selected = Tensor::host(DType::kI32, {7, 2});
  const int32_t picks[] = {1, -1, 0, 1, 1, 0, 1, -1, 0, 2, 2, 1, 3, 0};  // all closed by each query
  std::copy(std::begin(picks), std::end(picks), selected.data_as<int32_t>());
  check_attention(selected);
}

// weights undefined: every head weighs 1 (Qwen4-Exp's QSA indexer).
void check_indexer(bool weighted) {
  const Step s;
  const int64_t top_k = 3;
  const Tensor rows = test::random_f32({9 * kBlock, kRowWidth}, 94), q = test::random_f32({7, kHeads, kDim}, 95);
  const Tensor weights = weighted ? test::random_f32({7, kHeads}, 96) : Tensor();
  Tensor selected = Tensor::host(DType::kI32, {7, top_k});
  ops::indexer_top_k(q, weights, rows, s.meta(),
                     {.head_dim = kDim, .block_size = kBlock, .rate = kRate, .entry_offset = kEntryOffset,
                      .top_k = top_k, .scale = 0.5f},
                     selected);
  for (int64_t t = 0; t < 7; ++t) {
    const int64_t closed = (s.positions[t] + 1) / kRate;
    std::vector<double> score(closed);
    for (int64_t w = 0; w < closed; ++w)
      for (int64_t h = 0; h < kHeads; ++h) {
        double dot = 0;
        const float* e = s.row(rows, t, w * kRate + kRate - 1) + kEntryOffset;
        for (int64_t i = 0; i < kDim; ++i) dot += q.data_as<float>()[(t * kHeads + h) * kDim + i] * e[i];
        score[w] += std::max(dot, 0.0) * 0.5 * (weighted ? weights.data_as<float>()[t * kHeads + h] : 1.0);
      }
    std::vector<int32_t> order(closed);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return score[a] > score[b]; });
    for (int64_t j = 0; j < top_k; ++j)
      EXPECT_EQ(selected.data_as<int32_t>()[t * top_k + j], j < closed ? order[j] : -1) << t << "," << j;
  }
}

TEST(CompressedAttentionOp, IndexerKeepsTheBestClosedEntries) { check_indexer(/*weighted=*/true); }
TEST(CompressedAttentionOp, IndexerWithUnitHeadWeights) { check_indexer(/*weighted=*/false); }

}  // namespace
}  // namespace strata
