#include "strata/ops/layer_norm.h"

#include <cmath>

#include "strata/core/parallel.h"

namespace strata::cpu {

// Mean and variance in double: rows are short and this is the reference the tests trust.
void layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps, const Tensor& out) {
  const int64_t d = x.dim(1);
  const float* w = weight.data_as<float>();
  const float* b = bias.data_as<float>();
  parallel_for(x.dim(0), 8, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float* in = x.data_as<float>() + t * d;
      float* o = out.data_as<float>() + t * d;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < d; ++i) mean += in[i];
      mean /= static_cast<double>(d);
      for (int64_t i = 0; i < d; ++i) var += (in[i] - mean) * (in[i] - mean);
      const double inv = 1.0 / std::sqrt(var / static_cast<double>(d) + eps);
      for (int64_t i = 0; i < d; ++i) o[i] = static_cast<float>((in[i] - mean) * inv) * w[i] + b[i];
    }
  });
}

}  // namespace strata::cpu
