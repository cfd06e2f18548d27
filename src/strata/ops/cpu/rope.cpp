#include "strata/ops/rope.h"

#include <cmath>
#include <vector>

#include "strata/core/parallel.h"

namespace strata::cpu {
namespace {

void rotate_heads(float* x, int64_t num_heads, int64_t head_dim, const float* cos, const float* sin,
                  int64_t half) {
  for (int64_t h = 0; h < num_heads; ++h) {
    float* v = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const float a = v[i], b = v[i + half];
      v[i] = a * cos[i] - b * sin[i];
      v[i + half] = b * cos[i] + a * sin[i];
    }
  }
}

}  // namespace

void rope(const Tensor& q, const Tensor& k, const Tensor& positions, const Tensor& inv_freq,
          const ops::RopeParams& params) {
  const int64_t num_tokens = q.dim(0), head_dim = q.dim(2), half = params.rotary_dim / 2;
  const bool mrope = positions.rank() == 2;  // [3, T]: frequency i reads stream mrope.stream(i)
  parallel_for(num_tokens, 4, [&](int64_t begin, int64_t end) {
    std::vector<float> cos(half), sin(half);
    for (int64_t t = begin; t < end; ++t) {
      for (int64_t i = 0; i < half; ++i) {
        const int64_t stream = mrope ? params.mrope.stream(i) : 0;
        const float pos = static_cast<float>(positions.data_as<int32_t>()[stream * num_tokens + t]);
        const float angle = pos * inv_freq.data_as<float>()[i];
        cos[i] = std::cos(angle) * params.attention_scaling;
        sin[i] = std::sin(angle) * (params.inverse ? -params.attention_scaling : params.attention_scaling);
      }
      rotate_heads(q.data_as<float>() + t * q.dim(1) * head_dim, q.dim(1), head_dim, cos.data(),
                   sin.data(), half);
      rotate_heads(k.data_as<float>() + t * k.dim(1) * head_dim, k.dim(1), head_dim, cos.data(),
                   sin.data(), half);
    }
  });
}

}  // namespace strata::cpu
