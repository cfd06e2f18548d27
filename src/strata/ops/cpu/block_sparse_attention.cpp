// QSA attention and block pooling in f32 as transformers computes them: eager attention with the
// indexer's selection mask (Qwen4ExpTextAttention), the f32 mean of a block's index keys.
#include <algorithm>
#include <cmath>
#include <vector>

#include "strata/core/parallel.h"
#include "strata/ops/block_sparse_attention.h"
#include "strata/ops/cpu/cache_rows.h"

namespace strata::cpu {
namespace {

// The positions query t sees: its selected blocks' tokens, then the tail after its last complete block.
std::vector<int64_t> positions_of(const ops::BlockSparseAttentionParams& p, const QueryPlace& place, int64_t t) {
  std::vector<int64_t> positions;
  const int64_t closed = (place.position + 1) / p.rate, k = p.selected.dim(1);
  for (int64_t j = 0; j < k; ++j) {
    const int32_t block = p.selected.data_as<int32_t>()[t * k + j];
    if (block < 0) continue;
    STRATA_CHECK(block < closed);
    for (int64_t i = 0; i < p.rate; ++i) positions.push_back(block * p.rate + i);
  }
  for (int64_t pos = closed * p.rate; pos <= place.position; ++pos) positions.push_back(pos);
  return positions;
}

}  // namespace

void block_sparse_attention(const Tensor& q, const Tensor& k_rows, const Tensor& v_rows,
                            const ops::AttentionMetadata& meta, const ops::BlockSparseAttentionParams& params,
                            const Tensor& out) {
  const int64_t heads = q.dim(1), d = params.head_dim, group = heads / params.num_kv_heads;
  parallel_for(q.dim(0), 1, [&](int64_t begin, int64_t end) {
    std::vector<float> logits;
    std::vector<const float*> keys, values;
    for (int64_t t = begin; t < end; ++t) {
      const QueryPlace place = place_of(meta, t);
      const std::vector<int64_t> positions = positions_of(params, place, t);
      const int64_t n = static_cast<int64_t>(positions.size());
      keys.resize(n);
      values.resize(n);
      logits.resize(n);
      for (int64_t j = 0; j < n; ++j) {
        keys[j] = row_at(k_rows, place, positions[j], params.block_size);
        values[j] = row_at(v_rows, place, positions[j], params.block_size);
      }
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t head_offset = (h / group) * d;
        const float* qh = q.data_as<float>() + (t * heads + h) * d;
        float mx = -INFINITY;
        for (int64_t j = 0; j < n; ++j) mx = std::max(mx, logits[j] = dot(qh, keys[j] + head_offset, d) * params.scale);
        float sum = 0.f;
        for (int64_t j = 0; j < n; ++j) sum += logits[j] = std::exp(logits[j] - mx);
        float* o = out.data_as<float>() + (t * heads + h) * d;
        std::fill(o, o + d, 0.f);
        for (int64_t j = 0; j < n; ++j) {
          const float w = logits[j] / sum;
          for (int64_t i = 0; i < d; ++i) o[i] += w * values[j][head_offset + i];
        }
      }
    }
  });
}

void mean_row_windows(const Tensor& rows, const Tensor& window_slots, int64_t column, const Tensor& out) {
  const int64_t num = window_slots.dim(0), size = window_slots.dim(1), d = out.dim(1);
  for (int64_t e = 0; e < num; ++e) {
    float* o = out.data_as<float>() + e * d;
    std::fill(o, o + d, 0.f);
    for (int64_t j = 0; j < size; ++j) {
      const int32_t slot = window_slots.data_as<int32_t>()[e * size + j];
      STRATA_CHECK(slot >= 0 && slot < rows.dim(0));
      const float* src = rows.data_as<float>() + slot * rows.dim(1) + column;
      for (int64_t i = 0; i < d; ++i) o[i] += src[i];
    }
    for (int64_t i = 0; i < d; ++i) o[i] /= static_cast<float>(size);
  }
}

}  // namespace strata::cpu
