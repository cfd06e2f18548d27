#include "strata/ops/mla.h"

#include <algorithm>
#include <cstring>

#include "strata/core/error.h"

namespace strata::cpu {

void mla_expand_kv(const Tensor& kv, const Tensor& k_rot, int64_t nope_dim, const Tensor& k_out, const Tensor& v_out) {
  STRATA_CHECK(kv.dtype() == DType::kF32);
  const int64_t t = kv.dim(0), heads = kv.dim(1), in = kv.dim(2), rope = k_rot.dim(1), width = rope + nope_dim;
  const int64_t v_dim = in - nope_dim;
  for (int64_t i = 0; i < t; ++i)
    for (int64_t h = 0; h < heads; ++h) {
      const float* src = kv.data_as<const float>() + (i * heads + h) * in;
      float* k = k_out.data_as<float>() + (i * heads + h) * width;
      float* v = v_out.data_as<float>() + (i * heads + h) * width;
      std::memcpy(k, k_rot.data_as<const float>() + i * rope, rope * sizeof(float));
      std::memcpy(k + rope, src, nope_dim * sizeof(float));
      std::memcpy(v, src + nope_dim, v_dim * sizeof(float));
      std::fill(v + v_dim, v + width, 0.0f);
    }
}

void narrow_heads(const Tensor& src, const Tensor& out) {
  STRATA_CHECK(src.dtype() == DType::kF32);
  const int64_t rows = src.dim(0) * src.dim(1), from = src.dim(2), to = out.dim(2);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out.data_as<float>() + r * to, src.data_as<const float>() + r * from, to * sizeof(float));
}

}  // namespace strata::cpu
