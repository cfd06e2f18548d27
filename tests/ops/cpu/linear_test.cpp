// CPU linear against a double-precision reference on the same stored weights: f32, f16 and
// bf16, the per-row dot path (4 rows per pass plus a row tail), the register-blocked
// small-batch path and the widened-tile sgemm path (token counts each side of both
// crossovers), in_features with and without a multiple-of-8 tail, and a bias.
#include "strata/ops/linear.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "strata/ops/cpu/convert.h"
#include "strata/ops/cpu/small_batch_gemm.h"
#include "test_support.h"

namespace strata::cpu {
namespace {

void check(DType dtype, int64_t tokens, int64_t out, int64_t in, bool bias) {
  SCOPED_TRACE(testing::Message() << dtype_name(dtype) << " tokens=" << tokens << " out=" << out << " in=" << in);
  const Tensor w = test::stored_as(test::random_f32({out, in}, 7), dtype);  // dtype [out, in]
  const Tensor x = test::random_f32({tokens, in}, 8);               // f32 [tokens, in]
  const Tensor b = bias ? test::stored_as(test::random_f32({out}, 9), dtype) : Tensor();
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

TEST(LinearCpuTest, MatchesReferenceOnEveryPath) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    // Per-row dots below kSmallBatchMinTokens, small_batch_gemm up to kSmallBatchMaxTokens,
    // tiles + sgemm above.
    for (int64_t tokens : {kSmallBatchMinTokens - 1, kSmallBatchMinTokens, int64_t{4}, int64_t{5}, int64_t{9},
                           kSmallBatchMaxTokens, kSmallBatchMaxTokens + 1, int64_t{40}}) {
      check(dtype, tokens, 37, 100, false);
      check(dtype, tokens, 130, 64, true);
    }
  }
}

}  // namespace
}  // namespace strata::cpu
