// CPU linear against a double-precision reference on the same stored weights: f32, f16 and
// bf16, the per-row dot path (<= 4 tokens, 4 rows per pass plus a row tail) and the
// widened-tile sgemm path, in_features with and without a multiple-of-8 tail, and a bias.
#include "strata/ops/linear.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "strata/ops/cpu/convert.h"
#include "test_support.h"

namespace strata::cpu {
namespace {

// w_f32: f32 [out, in] -> stored as `dtype`.
Tensor stored(const Tensor& w_f32, DType dtype) {
  Tensor w = Tensor::host(dtype, w_f32.shape());
  narrow_from_f32(w_f32.data_as<float>(), dtype, w_f32.numel(), w.data());
  return w;
}

void check(DType dtype, int64_t tokens, int64_t out, int64_t in, bool bias) {
  SCOPED_TRACE(testing::Message() << dtype_name(dtype) << " tokens=" << tokens << " out=" << out << " in=" << in);
  const Tensor w = stored(test::random_f32({out, in}, 7), dtype);  // dtype [out, in]
  const Tensor x = test::random_f32({tokens, in}, 8);               // f32 [tokens, in]
  const Tensor b = bias ? stored(test::random_f32({out}, 9), dtype) : Tensor();
  Tensor y = Tensor::host(DType::kF32, {tokens, out});
  linear(x, w, b, y);
  std::vector<float> row(in), bias_f32(out, 0.f);
  if (bias) widen_to_f32(b.data(), dtype, out, bias_f32.data());
  for (int64_t o = 0; o < out; ++o) {
    widen_to_f32(static_cast<const char*>(w.data()) + dtype_bytes(dtype, o * in), dtype, in, row.data());
    for (int64_t t = 0; t < tokens; ++t) {
      double ref = bias_f32[o], abs_sum = 0;
      for (int64_t i = 0; i < in; ++i) {
        ref += static_cast<double>(row[i]) * x.data_as<float>()[t * in + i];
        abs_sum += std::fabs(static_cast<double>(row[i]) * x.data_as<float>()[t * in + i]);
      }
      ASSERT_NEAR(y.data_as<float>()[t * out + o], ref, 1e-5 * abs_sum + 1e-6) << "o=" << o << " t=" << t;
    }
  }
}

TEST(LinearCpuTest, MatchesReferenceOnBothPaths) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (int64_t tokens : {1, 3, 4, 5, 9}) {  // <= 4: per-row dots; above: tiles + sgemm
      check(dtype, tokens, 37, 100, false);
      check(dtype, tokens, 130, 64, true);
    }
  }
}

}  // namespace
}  // namespace strata::cpu
