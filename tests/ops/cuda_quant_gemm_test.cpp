// The quantized GEMM past the GEMVs' 8 rows (batched decode) against the CPU linear on the same
// random blocks, dequantised: every format it reads, N past a 128-row block, bias, accumulation,
// gated input, every K split, bf16 and f32 out, weights in registers or staged through shared
// memory, called directly and through ops::linear (which widens to bf16 past
// kQuantMmaGemmMaxRows); outputs (and the splits' partials) poisoned first.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ops/cuda_op_support.h"
#include "ops/quant_blocks_support.h"
#if defined(STRATA_WITH_CUDA)
#include "strata/backend/cuda/cuda_check.h"
#include "strata/backend/cuda/scratch_pool.h"
#include "strata/ops/cuda/quant_mma_gemm.h"
#endif
#include "strata/ops/linear.h"

namespace strata::test {
namespace {

#if defined(STRATA_WITH_CUDA)
struct GemmShape {
  DType dtype;
  int64_t n, k;
};

std::string describe(const GemmShape& s, int64_t m) {
  return std::string(dtype_name(s.dtype)) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
         " m=" + std::to_string(m);
}

// f32 [m, n]: ref plus the bf16 bias on every row.
Tensor plus_bias(const Tensor& ref, const Tensor& bias) {
  Tensor out = host_copy(ref);
  for (int64_t i = 0; i < out.numel(); ++i) out.data_as<float>()[i] += bias.data_as<float>()[i % bias.numel()];
  return out;
}

class CudaQuantGemm : public CudaOpTest {
 protected:
  static cuda::QuantGemvArgs args_for(const Tensor& x, const Tensor& w, const Tensor& out) {
    return {.x = x.data(), .weight = w.data(), .out = out.data(), .out_dtype = out.dtype(), .m = x.dim(0),
            .n = w.dim(0), .k = w.dim(1)};
  }

  // The splits' partials as NaN, so a split that wrote nothing cannot pass on stale sums.
  void poison_partials(int64_t bytes) {
    void* partials = cuda::scratch(cuda::ScratchUse::kQuantGemmPartials, bytes);
    STRATA_CUDA_CHECK(cudaMemsetAsync(partials, 0xFF, static_cast<size_t>(bytes), cuda::current_stream()));
  }

  // The GEMM called directly and ops::linear (the GEMM up to kQuantMmaGemmMaxRows rows, the
  // widening past it) at 9-513 rows, with and without bias, bf16 and f32 out.
  void expect_linear_matches(const GemmShape& s) {
    const Tensor q = random_blocks(s.dtype, {s.n, s.k}, 1000 + s.n + s.k), w = dequantised(q), gq = gpu_copy(q);
    const Tensor b = random_rounded({s.n}, 1001), gb = gpu_bf16(b);
    for (const int64_t m : {9, 20, 33, 64, 100, 128, 256, 513}) {
      const Tensor x = random_rounded({m, s.k}, 1002 + m, -2.f, 2.f), gx = gpu_bf16(x);
      Tensor ref = Tensor::host(DType::kF32, {m, s.n});
      ops::linear(x, w, Tensor(), ref);
      const Tensor ref_bias = plus_bias(ref, b);
      for (const DType out_dtype : {DType::kBF16, DType::kF32})
        for (const bool bias : {false, true}) {
          const std::string what = describe(s, m) + " " + std::string(dtype_name(out_dtype)) + (bias ? " bias" : "");
          Tensor out = poisoned(out_dtype, {m, s.n});
          cuda::QuantGemvArgs args = args_for(gx, gq, out);
          args.bias = bias ? gb.data() : nullptr;
          ASSERT_TRUE(cuda::quant_mma_gemm_supported(s.dtype, args)) << what;
          for (const int tile_rows : {32, 64})
            for (const bool staged : {false, true}) {
              if (staged && !cuda::quant_mma_gemm_stages_weights(s.dtype)) continue;
              gpu_->fill_bytes(out, 0xFF);
              cuda::quant_mma_gemm(s.dtype, args, cuda::current_stream(),
                                   {.tile_rows = tile_rows, .staged_weights = staged});
              expect_close(*gpu_, out, bias ? ref_bias : ref, kBf16Tolerance,
                           what + " gemm tile_rows=" + std::to_string(tile_rows) + (staged ? " staged" : ""));
            }
          gpu_->fill_bytes(out, 0xFF);
          ops::linear(gx, gq, bias ? gb : Tensor(), out);
          expect_close(*gpu_, out, bias ? ref_bias : ref, kBf16Tolerance, what + " linear");
        }
    }
  }
};

TEST_F(CudaQuantGemm, Q4_KMatchesCpuFrom9To513Rows) {
  for (const GemmShape& s : std::vector<GemmShape>{{DType::kQ4_K, 300, 1024}, {DType::kQ4_K, 128, 256}})
    expect_linear_matches(s);
}

TEST_F(CudaQuantGemm, Q8_0MatchesCpuFrom9To513Rows) {
  for (const GemmShape& s : std::vector<GemmShape>{{DType::kQ8_0, 300, 1024}, {DType::kQ8_0, 130, 512}})
    expect_linear_matches(s);
}

// K 1024 keeps FP8 rows (33 K / 32 bytes) 16-byte aligned, K 768 only 8-byte aligned.
TEST_F(CudaQuantGemm, Fp8MatchesCpuFrom9To513Rows) {
  for (const GemmShape& s :
       std::vector<GemmShape>{{DType::kF8_E4M3_B128, 300, 1024}, {DType::kF8_E4M3_B128, 200, 768}})
    expect_linear_matches(s);
}

TEST_F(CudaQuantGemm, OtherNibbleTypesMatchCpuFrom9To513Rows) {
  for (const GemmShape& s : std::vector<GemmShape>{{DType::kQ5_K, 300, 512}, {DType::kQ6_K, 200, 2048},
                                                   {DType::kQ4_0, 300, 512}, {DType::kQ4_1, 300, 512},
                                                   {DType::kQ5_0, 300, 512}, {DType::kQ5_1, 300, 512}})
    expect_linear_matches(s);
}

// Called directly: K of 16 tiles in 1 (one block a column), 3 (6 + 6 + 4 tiles), 16 splits and
// the shape's own choice, blocks of 32 and 64 rows, adding bias and the product into a residual.
TEST_F(CudaQuantGemm, KSplitsBiasAndAccumulateMatchCpu) {
  const int64_t n = 777, k = 4096, max_rows = 256, max_splits = 16;
  poison_partials(max_splits * max_rows * n * static_cast<int64_t>(sizeof(float)));  // its largest request
  for (const DType dtype : {DType::kQ4_K, DType::kQ8_0, DType::kF8_E4M3_B128, DType::kQ6_K}) {
    const Tensor q = random_blocks(dtype, {n, k}, 1100), w = dequantised(q), gq = gpu_copy(q);
    const Tensor b = random_rounded({n}, 1101), gb = gpu_bf16(b), b_bf16 = to_bf16_host(b);
    for (const int64_t m : {int64_t{9}, int64_t{33}, int64_t{100}, max_rows}) {
      const Tensor x = random_rounded({m, k}, 1102 + m, -2.f, 2.f), gx = gpu_bf16(x);
      const Tensor residual = random_rounded({m, n}, 1103 + m, -4.f, 4.f);
      Tensor ref = host_copy(residual);
      ops::linear(x, w, b_bf16, ref, {.accumulate = true});
      for (const int splits : {0, 1, 3, static_cast<int>(max_splits)})
        for (const int tile_rows : {32, 64})
          for (const DType out_dtype : {DType::kBF16, DType::kF32})
            for (const bool staged : {false, true}) {
              if (staged && !cuda::quant_mma_gemm_stages_weights(dtype)) continue;
              Tensor out = out_dtype == DType::kF32 ? gpu_copy(residual) : gpu_bf16(residual);
              cuda::QuantGemvArgs args = args_for(gx, gq, out);
              args.bias = gb.data();
              args.accumulate = true;
              poison_partials(max_splits * max_rows * n * static_cast<int64_t>(sizeof(float)));
              cuda::quant_mma_gemm(dtype, args, cuda::current_stream(),
                                   {.k_splits = splits, .tile_rows = tile_rows, .staged_weights = staged});
              expect_close(*gpu_, out, ref, kBf16Tolerance,
                           describe({dtype, n, k}, m) + " splits=" + std::to_string(splits) + " tile_rows=" +
                               std::to_string(tile_rows) + " " + std::string(dtype_name(out_dtype)) +
                               (staged ? " staged" : ""));
            }
    }
  }
}

// The down projection of a batched decode step: act(gate) * up into scratch, then the GEMM adding
// into the residual.
TEST_F(CudaQuantGemm, GatedInputAndAccumulateMatchCpu) {
  for (const DType dtype : {DType::kQ4_K, DType::kQ8_0, DType::kF8_E4M3_B128}) {
    const Tensor q = random_blocks(dtype, {384, 1536}, 1200), w = dequantised(q), gq = gpu_copy(q);
    for (const int64_t m : {12, 40, 64, 200}) expect_gated_accumulate_matches(w, gq, m, 1201 + m);
  }
}
#endif

}  // namespace
}  // namespace strata::test
