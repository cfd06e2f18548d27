// DeepSeek-V4 attention and the lightning indexer's selection over per-token cache rows, in f32
// as transformers computes them (eager_attention_forward with sinks; DeepseekV4IndexerScorer).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/ops/compressed_attention.h"
#include "strata/ops/cpu/cache_rows.h"

namespace strata::cpu {
namespace {

// The keys (= values) query t sees: its window's kv, then its compressed entries.
std::vector<const float*> keys_of(const Tensor& rows, const ops::CompressedAttentionParams& p,
                                  const QueryPlace& place, int64_t t) {
  std::vector<const float*> keys;
  for (int64_t pos = std::max<int64_t>(0, place.position - p.sliding_window + 1); pos <= place.position; ++pos)
    keys.push_back(row_at(rows, place, pos, p.block_size));
  if (p.rate == 0) return keys;
  const int64_t closed = (place.position + 1) / p.rate;
  auto add_entry = [&](int64_t w) {
    STRATA_CHECK(w < closed);
    keys.push_back(row_at(rows, place, w * p.rate + p.rate - 1, p.block_size) + p.entry_offset);
  };
  if (!p.selected.defined()) {
    for (int64_t w = 0; w < closed; ++w) add_entry(w);
  } else {
    const int64_t k = p.selected.dim(1);
    for (int64_t j = 0; j < k; ++j)
      if (const int32_t w = p.selected.data_as<int32_t>()[t * k + j]; w >= 0) add_entry(w);
  }
  return keys;
}

void attend(const float* q, const std::vector<const float*>& keys, float sink, const ops::CompressedAttentionParams& p,
            std::vector<float>& logits, float* out) {
  const int64_t d = p.head_dim, n = static_cast<int64_t>(keys.size());
  float mx = sink;
  for (int64_t j = 0; j < n; ++j) mx = std::max(mx, logits[j] = dot(q, keys[j], d) * p.scale);
  float sum = std::exp(sink - mx);
  for (int64_t j = 0; j < n; ++j) sum += logits[j] = std::exp(logits[j] - mx);
  std::fill(out, out + d, 0.f);
  for (int64_t j = 0; j < n; ++j) {
    const float w = logits[j] / sum;
    for (int64_t i = 0; i < d; ++i) out[i] += w * keys[j][i];
  }
}

}  // namespace

void compressed_attention(const Tensor& q, const Tensor& rows, const ops::AttentionMetadata& meta,
                          const ops::CompressedAttentionParams& params, const Tensor& out) {
  const int64_t heads = q.dim(1), d = params.head_dim;
  parallel_for(q.dim(0), 1, [&](int64_t begin, int64_t end) {
    std::vector<float> logits;
    for (int64_t t = begin; t < end; ++t) {
      const std::vector<const float*> keys = keys_of(rows, params, place_of(meta, t), t);
      logits.resize(keys.size());
      for (int64_t h = 0; h < heads; ++h)
        attend(q.data_as<float>() + (t * heads + h) * d, keys, params.sinks.data_as<float>()[h], params, logits,
               out.data_as<float>() + (t * heads + h) * d);
    }
  });
}

void indexer_top_k(const Tensor& q, const Tensor& weights, const Tensor& rows, const ops::AttentionMetadata& meta,
                   const ops::IndexerParams& params, const Tensor& selected) {
  const int64_t heads = q.dim(1), d = params.head_dim, k = params.top_k;
  parallel_for(q.dim(0), 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    std::vector<int32_t> order;
    for (int64_t t = begin; t < end; ++t) {
      const QueryPlace place = place_of(meta, t);
      const int64_t closed = (place.position + 1) / params.rate;
      scores.assign(closed, 0.f);
      for (int64_t w = 0; w < closed; ++w) {
        const float* entry = row_at(rows, place, w * params.rate + params.rate - 1, params.block_size) + params.entry_offset;
        for (int64_t h = 0; h < heads; ++h) {
          const float s = std::max(dot(q.data_as<float>() + (t * heads + h) * d, entry, d), 0.f) * params.scale;
          scores[w] += weights.defined() ? s * weights.data_as<float>()[t * heads + h] : s;
        }
      }
      order.resize(closed);
      std::iota(order.begin(), order.end(), 0);
      const int64_t kept = std::min(k, closed);
      std::partial_sort(order.begin(), order.begin() + kept, order.end(),
                        [&](int32_t a, int32_t b) { return scores[a] > scores[b] || (scores[a] == scores[b] && a < b); });
      for (int64_t j = 0; j < k; ++j) selected.data_as<int32_t>()[t * k + j] = j < kept ? order[j] : -1;
    }
  });
}

}  // namespace strata::cpu
