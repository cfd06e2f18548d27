#include "strata/ops/varlen_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "strata/core/parallel.h"

namespace strata::cpu {
namespace {

// One query row of one head against its segment [begin, end): softmax(q k^T scale) v.
void attend_row(const Tensor& q, const Tensor& k, const Tensor& v, int64_t t, int64_t h, int64_t begin, int64_t end,
                float scale, const Tensor& out, std::vector<float>& scores) {
  const int64_t heads = q.dim(1), d = q.dim(2);
  const float* qr = q.data_as<float>() + (t * heads + h) * d;
  float max_score = -INFINITY;
  for (int64_t j = begin; j < end; ++j) {
    const float* kr = k.data_as<float>() + (j * heads + h) * d;
    float dot = 0;
    for (int64_t i = 0; i < d; ++i) dot += qr[i] * kr[i];
    scores[j - begin] = dot * scale;
    max_score = std::max(max_score, scores[j - begin]);
  }
  double sum = 0;
  for (int64_t j = begin; j < end; ++j) sum += scores[j - begin] = std::exp(scores[j - begin] - max_score);
  float* o = out.data_as<float>() + (t * heads + h) * d;
  std::fill(o, o + d, 0.0f);
  for (int64_t j = begin; j < end; ++j) {
    const float p = static_cast<float>(scores[j - begin] / sum);
    const float* vr = v.data_as<float>() + (j * heads + h) * d;
    for (int64_t i = 0; i < d; ++i) o[i] += p * vr[i];
  }
}

}  // namespace

void varlen_attention(const Tensor& q, const Tensor& k, const Tensor& v, const std::vector<int32_t>& cu_seqlens,
                      float scale, const Tensor& out) {
  const int64_t heads = q.dim(1);
  std::vector<int64_t> segment_of(q.dim(0));
  for (size_t s = 0; s + 1 < cu_seqlens.size(); ++s)
    std::fill(segment_of.begin() + cu_seqlens[s], segment_of.begin() + cu_seqlens[s + 1], static_cast<int64_t>(s));
  parallel_for(q.dim(0) * heads, 4, [&](int64_t first, int64_t last) {
    std::vector<float> scores(q.dim(0));
    for (int64_t item = first; item < last; ++item) {
      const int64_t t = item / heads, s = segment_of[t];
      attend_row(q, k, v, t, item % heads, cu_seqlens[s], cu_seqlens[s + 1], scale, out, scores);
    }
  });
}

}  // namespace strata::cpu
