// Window pooling in transformers' order (DeepseekV4CSACompressor / HCACompressor): gate plus
// position bias, softmax over the window's slots per channel in f32, weighted sum, RMS norm.
#include <algorithm>
#include <cmath>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/ops/compressed_kv.h"

namespace strata::cpu {
namespace {

// One entry: slots[j] is the cache slot of window place j (-1: absent).
void pool_window(const Tensor& rows, const int32_t* slots, const Tensor& position_bias, const Tensor& norm_weight,
                 const ops::CompressedKvParams& p, float* out) {
  const int64_t d = p.head_dim, width = p.overlap ? 2 * d : d, num = p.overlap ? 2 * p.rate : p.rate;
  const float* bias = position_bias.data_as<float>();
  std::vector<float> gate(num);
  for (int64_t c = 0; c < d; ++c) {
    float mx = -INFINITY;
    for (int64_t j = 0; j < num; ++j) {
      if (slots[j] < 0) continue;
      STRATA_CHECK(slots[j] < rows.dim(0));
      // With overlap, places [0, rate) read series A (channels [0, d)), [rate, 2 rate) series B.
      const int64_t channel = p.overlap && j >= p.rate ? d + c : c;
      const float* row = rows.data_as<float>() + slots[j] * rows.dim(1);
      gate[j] = row[p.gate_offset + channel] + bias[(j % p.rate) * width + channel];
      mx = std::max(mx, gate[j]);
    }
    float sum = 0.f, acc = 0.f;
    for (int64_t j = 0; j < num; ++j)
      if (slots[j] >= 0) sum += gate[j] = std::exp(gate[j] - mx);
    for (int64_t j = 0; j < num; ++j) {
      if (slots[j] < 0) continue;
      const int64_t channel = p.overlap && j >= p.rate ? d + c : c;
      acc += rows.data_as<float>()[slots[j] * rows.dim(1) + p.kv_offset + channel] * (gate[j] / sum);
    }
    out[c] = acc;
  }
  float sum_sq = 0.f;
  for (int64_t c = 0; c < d; ++c) sum_sq += out[c] * out[c];
  const float inv = 1.f / std::sqrt(sum_sq / static_cast<float>(d) + p.eps);
  for (int64_t c = 0; c < d; ++c) out[c] = norm_weight.data_as<float>()[c] * (out[c] * inv);
}

}  // namespace

void compress_kv_windows(const Tensor& rows, const Tensor& window_slots, const Tensor& position_bias,
                         const Tensor& norm_weight, const ops::CompressedKvParams& params, const Tensor& out) {
  const int64_t num_slots = window_slots.dim(1);
  parallel_for(window_slots.dim(0), 1, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e)
      pool_window(rows, window_slots.data_as<int32_t>() + e * num_slots, position_bias, norm_weight, params,
                  out.data_as<float>() + e * params.head_dim);
  });
}

void store_row_part(const Tensor& src, const Tensor& slots, int64_t column, const Tensor& rows) {
  const int64_t n = src.dim(1);
  for (int64_t i = 0; i < src.dim(0); ++i) {
    const int32_t slot = slots.data_as<int32_t>()[i];
    if (slot < 0) continue;
    STRATA_CHECK(slot < rows.dim(0));
    std::copy_n(src.data_as<float>() + i * n, n, rows.data_as<float>() + slot * rows.dim(1) + column);
  }
}

}  // namespace strata::cpu
