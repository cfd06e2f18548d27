#include "strata/ops/rms_norm.h"

#include <cmath>
#include <vector>

#include "strata/core/parallel.h"
#include "strata/ops/cpu/convert.h"

namespace strata::cpu {

void rms_norm(const Tensor& x, const Tensor* residual_in, const Tensor& weight, const Tensor& out,
              const ops::RmsNormParams& params) {
  const int64_t rows = x.dim(0), dim = x.dim(1);
  std::vector<float> w(dim);
  widen_to_f32(weight.data(), weight.dtype(), dim, w.data());
  if (params.unit_offset)
    for (float& v : w) v += 1.0f;
  parallel_for(rows, 8, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* src = x.data_as<float>() + r * dim;
      if (residual_in != nullptr) {
        float* res = residual_in->data_as<float>() + r * dim;
        for (int64_t i = 0; i < dim; ++i) res[i] += src[i];
        src = res;
      }
      double sum = 0;
      for (int64_t i = 0; i < dim; ++i) sum += static_cast<double>(src[i]) * src[i];
      const float inv = 1.0f / std::sqrt(static_cast<float>(sum / dim) + params.eps);
      float* dst = out.data_as<float>() + r * dim;
      for (int64_t i = 0; i < dim; ++i) dst[i] = src[i] * inv * w[i];
    }
  });
}

}  // namespace strata::cpu
