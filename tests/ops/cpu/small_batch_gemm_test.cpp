// small_batch_gemm against a double-precision reference on the same stored weights (f32,
// f16, bf16; random values): every token count 1-16 and a few above (groups of <= 6 tokens),
// odd row counts (a 1-row tail block), in_features below 8, with a tail past the last 8 or
// past the last cache line, and enough rows for several L2 panels per thread; bit equality
// with the per-row dots; and linear's choice of kernel.
#include "strata/ops/cpu/small_batch_gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "strata/ops/cpu/convert.h"
#include "test_support.h"

namespace strata::cpu {
namespace {

void check(DType dtype, int64_t tokens, int64_t out, int64_t in) {
  SCOPED_TRACE(testing::Message() << dtype_name(dtype) << " tokens=" << tokens << " out=" << out << " in=" << in);
  const Tensor w = test::stored_as(test::random_f32({out, in}, static_cast<uint32_t>(11 + tokens)), dtype);  // dtype [out, in]
  const Tensor x = test::random_f32({tokens, in}, static_cast<uint32_t>(12 + out));                 // f32 [tokens, in]
  Tensor y = Tensor::host(DType::kF32, {tokens, out});                                              // f32 [tokens, out]
  std::fill_n(y.data_as<float>(), y.numel(), std::numeric_limits<float>::quiet_NaN());  // catch unwritten outputs
  small_batch_gemm({.x = x.data_as<float>(), .w = w.data(), .y = y.data_as<float>(), .w_dtype = dtype,
                    .num_tokens = tokens, .in_features = in, .out_features = out});
  std::vector<float> row(in);
  for (int64_t o = 0; o < out; ++o) {
    widen_to_f32(static_cast<const char*>(w.data()) + dtype_bytes(dtype, o * in), dtype, in, row.data());
    for (int64_t t = 0; t < tokens; ++t) {
      double ref = 0, abs_sum = 0;
      for (int64_t i = 0; i < in; ++i) {
        const double product = static_cast<double>(row[i]) * x.data_as<float>()[t * in + i];
        ref += product;
        abs_sum += std::fabs(product);
      }
      ASSERT_NEAR(y.data_as<float>()[t * out + o], ref, 1e-5 * abs_sum + 1e-6) << "o=" << o << " t=" << t;
    }
  }
}

TEST(SmallBatchGemmTest, MatchesReferenceForEveryTokenCount) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (int64_t tokens = 1; tokens <= 16; ++tokens) check(dtype, tokens, 37, 100);
    for (int64_t tokens : {17, 23, 32, 40}) check(dtype, tokens, 37, 100);
  }
}

TEST(SmallBatchGemmTest, MatchesReferenceOnOddShapes) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (int64_t tokens : {5, 7, 11, 16}) {
      check(dtype, tokens, 1, 8);        // one row: only the 1-row tail block
      check(dtype, tokens, 3, 5);        // in < 8: no vector step at all
      check(dtype, tokens, 9, 33);       // one or two cache lines, then a 1-element tail
      check(dtype, tokens, 130, 64);     // in a whole number of cache lines, even rows
      check(dtype, tokens, 1201, 1000);  // ~150 rows a chunk: several 128 KiB panels, next prefetched
    }
  }
}

// A token's outputs must not depend on how many tokens share its step (the engine's
// batch-invariance tests): the blocked kernel reproduces the per-row dots bit for bit.
TEST(SmallBatchGemmTest, EqualsThePerRowDotsBitForBit) {
  const int64_t out = 37, in = 100;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (int64_t tokens : {5, 8, 13}) {
      SCOPED_TRACE(testing::Message() << dtype_name(dtype) << " tokens=" << tokens);
      const Tensor w = test::stored_as(test::random_f32({out, in}, 21), dtype);  // dtype [out, in]
      const Tensor x = test::random_f32({tokens, in}, 22);               // f32 [tokens, in]
      Tensor y = Tensor::host(DType::kF32, {tokens, out});               // f32 [tokens, out]
      small_batch_gemm({.x = x.data_as<float>(), .w = w.data(), .y = y.data_as<float>(), .w_dtype = dtype,
                        .num_tokens = tokens, .in_features = in, .out_features = out});
      const int64_t row_bytes = dtype_bytes(dtype, in);
      float dots[kDotRowsF32];
      for (int64_t t = 0; t < tokens; ++t)
        for (int64_t o = 0; o < out; o += kDotRowsF32) {
          const int n = static_cast<int>(std::min<int64_t>(kDotRowsF32, out - o));
          dot_rows_f32(x.data_as<float>() + t * in, static_cast<const char*>(w.data()) + o * row_bytes, dtype,
                       row_bytes, n, in, dots);
          for (int r = 0; r < n; ++r)
            ASSERT_EQ(y.data_as<float>()[t * out + o + r], dots[r]) << "o=" << o + r << " t=" << t;
        }
    }
  }
}

TEST(SmallBatchGemmTest, LinearPicksKernelByDtypeAndTokenCount) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    EXPECT_EQ(linear_kernel_for(dtype, 1), LinearKernel::kDotRows);
    EXPECT_EQ(linear_kernel_for(dtype, kSmallBatchMinTokens - 1), LinearKernel::kDotRows);
    for (int64_t tokens = kSmallBatchMinTokens; tokens <= 16; ++tokens)
      EXPECT_EQ(linear_kernel_for(dtype, tokens), LinearKernel::kSmallBatch) << tokens;
    EXPECT_EQ(linear_kernel_for(dtype, kSmallBatchMaxTokens), LinearKernel::kSmallBatch);
    EXPECT_EQ(linear_kernel_for(dtype, kSmallBatchMaxTokens + 1), LinearKernel::kTiledSgemm);
    EXPECT_EQ(linear_kernel_for(dtype, 512), LinearKernel::kTiledSgemm);
  }
  // Other element types widen through dequantisation: they keep the tiles at any count.
  EXPECT_EQ(linear_kernel_for(DType::kF8_E4M3, 8), LinearKernel::kTiledSgemm);
}

}  // namespace
}  // namespace strata::cpu
