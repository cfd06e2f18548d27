// LayerNorm against a double-precision reference, with weight and bias away from 1 and 0.
#include <gtest/gtest.h>

#include <cmath>

#include "strata/ops/layer_norm.h"
#include "test_support.h"

namespace strata {
namespace {

TEST(LayerNormOp, NormalisesEachRowThenScalesAndShifts) {
  const Tensor x = test::random_f32({5, 48}, 31, -3, 5), w = test::random_f32({48}, 32), b = test::random_f32({48}, 33);
  Tensor out = Tensor::host(DType::kF32, {5, 48});
  ops::layer_norm(x, w, b, 1e-6f, out);
  for (int64_t r = 0; r < 5; ++r) {
    const float* in = x.data_as<float>() + r * 48;
    double mean = 0, var = 0;
    for (int i = 0; i < 48; ++i) mean += in[i] / 48.0;
    for (int i = 0; i < 48; ++i) var += (in[i] - mean) * (in[i] - mean) / 48.0;
    for (int i = 0; i < 48; ++i) {
      const double ref = (in[i] - mean) / std::sqrt(var + 1e-6) * w.data_as<float>()[i] + b.data_as<float>()[i];
      ASSERT_NEAR(out.data_as<float>()[r * 48 + i], ref, 1e-5) << r << "," << i;
    }
  }
}

}  // namespace
}  // namespace strata
