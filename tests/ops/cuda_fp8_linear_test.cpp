// FP8 weights on the GPU against the CPU on the same random inputs: the quantize and widen
// kernels bit for bit with the CPU's, and the CUDA linear over FP8 weights (the FP8 GEMV at
// 1-8 rows in each variant, widening + cuBLASLt beyond) against the CPU's FP8 linear, with
// bias, gated input and accumulation; outputs poisoned first.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ops/cuda_op_support.h"
#include "strata/ops/expert_linear.h"
#include "strata/ops/linear.h"
#include "strata/ops/moe.h"
#include "strata/weights/dequantize.h"
#include "strata/weights/fp8.h"
#if defined(STRATA_WITH_CUDA)
#include "strata/backend/cuda/cuda_check.h"
#include "strata/ops/cuda/fp8_convert.h"
#include "strata/ops/cuda/fp8_gemv.h"
#include "strata/ops/cuda/fp8_mma_gemv.h"
#endif

namespace strata::test {
namespace {

using CudaFp8Linear = CudaOpTest;

// f32 [N, K] quantized row by row on the CPU: fp8_b128 host tensor.
Tensor quantized_host(const Tensor& w) {
  Tensor q = Tensor::host(DType::kF8_E4M3_B128, w.shape());
  for (int64_t r = 0; r < w.dim(0); ++r)
    quantize_row_fp8_b128(w.data_as<float>() + r * w.dim(1), w.dim(1), static_cast<char*>(q.data()) + r * q.row_bytes());
  return q;
}

Tensor bytes_to_host(Backend& gpu, const Tensor& device) { return gpu.to_host(device); }

#if defined(STRATA_WITH_CUDA)
TEST_F(CudaFp8Linear, QuantizeAndWidenKernelsMatchCpuBitForBit) {
  Tensor w = random_rounded({300, 768}, 700, -0.3f, 0.3f);
  std::memset(w.data_as<float>() + 5 * 768 + 128, 0, 128 * sizeof(float));  // an all-zero block: scale 0
  Tensor fp8 = gpu_->empty(DType::kF8_E4M3_B128, w.shape());
  cuda::quantize_bf16_to_fp8_b128(gpu_bf16(w).data(), 300, 768, fp8.data());
  const Tensor got = bytes_to_host(*gpu_, fp8), expected = quantized_host(w);
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), expected.nbytes()), 0);

  Tensor widened = poisoned(DType::kBF16, w.shape());
  cuda::dequantize_fp8_b128_to_bf16(fp8.data(), 300, 768, widened.data());
  const Tensor widened_host = bytes_to_host(*gpu_, widened);
  std::vector<float> row(768);
  for (int64_t r = 0; r < 300; ++r) {
    dequantize_row(DType::kF8_E4M3_B128, static_cast<const char*>(expected.data()) + r * expected.row_bytes(),
                   row.data(), 768);
    for (int64_t j = 0; j < 768; ++j)
      ASSERT_EQ(widened_host.data_as<uint16_t>()[r * 768 + j], f32_to_bf16(row[j])) << r << " " << j;
  }
}
#endif

struct Fp8Shape {
  const char* name;
  int64_t n, k;
};

TEST_F(CudaFp8Linear, LinearMatchesCpuFromOneRowToPrefill) {
  for (const Fp8Shape& s : std::vector<Fp8Shape>{{"qkv", 6144, 4096}, {"down", 4096, 14336}, {"odd", 1000, 384}}) {
    const Tensor w = quantized_host(random_rounded({s.n, s.k}, 710 + s.n, -0.05f, 0.05f));
    const Tensor b = random_rounded({s.n}, 711), gw = gpu_copy(w), gb = gpu_bf16(b), b_bf16 = to_bf16_host(b);
    for (const int64_t m : {1, 2, 3, 5, 8, 9, 16, 17, 32, 40}) {
      const Tensor x = random_rounded({m, s.k}, 712 + m), gx = gpu_bf16(x);
      const bool bias = m % 2 == 1;
      Tensor ref = Tensor::host(DType::kF32, {m, s.n});
      ops::linear(x, w, bias ? b_bf16 : Tensor(), ref);
      for (const DType out_dtype : {DType::kBF16, DType::kF32}) {
        Tensor out = poisoned(out_dtype, {m, s.n});
        ops::linear(gx, gw, bias ? gb : Tensor(), out);
        expect_close(*gpu_, out, ref, kBf16Tolerance,
                     std::string(s.name) + " m=" + std::to_string(m) + " " + std::string(dtype_name(out_dtype)));
      }
    }
  }
}

// The down projection reading act(gate) * up and adding into the residual, over FP8 weights.
TEST_F(CudaFp8Linear, GatedInputAndAccumulateMatchCpu) {
  const int64_t n = 2048, k = 5632;
  const Tensor w = quantized_host(random_rounded({n, k}, 720, -0.05f, 0.05f)), gw = gpu_copy(w);
  for (const int64_t m : {1, 4, 8, 13, 24, 33}) expect_gated_accumulate_matches(w, gw, m, 721 + m);
}

#if defined(STRATA_WITH_CUDA)
// Each GEMV variant at every row count it takes; K = 101 blocks stages x in three K tiles at
// 5-8 rows (48 + 48 + 5 blocks), two at 3-4 rows.
TEST_F(CudaFp8Linear, EveryGemvVariantMatchesCpu) {
  const int64_t n = 777;
  for (const int64_t k : {2048, 101 * 128}) {
    const Tensor w = quantized_host(random_rounded({n, k}, 740 + k, -0.05f, 0.05f)), gw = gpu_copy(w);
    for (int64_t m = 1; m <= 8; ++m) {
      const Tensor x = random_rounded({m, k}, 741 + m), gx = gpu_bf16(x);
      Tensor ref = Tensor::host(DType::kF32, {m, n});
      ops::linear(x, w, Tensor(), ref);
      for (const auto variant : {cuda::Fp8GemvVariant::kRows2Unroll8, cuda::Fp8GemvVariant::kRows1Unroll16,
                                 cuda::Fp8GemvVariant::kRows4Unroll4}) {
        Tensor out = poisoned(DType::kF32, {m, n});
        cuda::fp8_gemv({.x = gx.data(), .weight = gw.data(), .out = out.data(), .out_dtype = DType::kF32, .m = m,
                        .n = n, .k = k},
                       cuda::current_stream(), variant);
        expect_close(*gpu_, out, ref, kBf16Tolerance,
                     "k=" + std::to_string(k) + " m=" + std::to_string(m) + " variant " +
                         std::to_string(static_cast<int>(variant)));
      }
    }
  }
}

// The tensor-core GEMV at every row count it takes (8, 16 or 32 mma columns) and warp split;
// N = 777 leaves a partial 16-row tile. Weights include an all-zero block and extreme codes.
TEST_F(CudaFp8Linear, MmaGemvMatchesCpuAtEveryRowCount) {
  const int64_t n = 777;
  for (const int64_t k : {1024, 25 * 512}) {
    Tensor wf = random_rounded({n, k}, 750 + k, -0.05f, 0.05f);
    std::memset(wf.data_as<float>() + 3 * k + 128, 0, 128 * sizeof(float));
    wf.data_as<float>()[7 * k + 5] = 3.f;  // a block whose other codes are tiny or subnormal
    const Tensor w = quantized_host(wf), gw = gpu_copy(w);
    for (int64_t m = 1; m <= cuda::kFp8MmaGemvMaxRows; ++m) {
      const Tensor x = random_rounded({m, k}, 751 + m, -2.f, 2.f), gx = gpu_bf16(x);
      Tensor ref = Tensor::host(DType::kF32, {m, n});
      ops::linear(x, w, Tensor(), ref);
      for (const auto variant : {cuda::Fp8MmaGemvVariant::kWarps8, cuda::Fp8MmaGemvVariant::kWarps4,
                                 cuda::Fp8MmaGemvVariant::kWarps2}) {
        Tensor out = poisoned(DType::kF32, {m, n});
        cuda::fp8_mma_gemv({.x = gx.data(), .weight = gw.data(), .out = out.data(), .out_dtype = DType::kF32,
                            .m = m, .n = n, .k = k},
                           cuda::current_stream(), variant);
        expect_close(*gpu_, out, ref, kBf16Tolerance,
                     "mma k=" + std::to_string(k) + " m=" + std::to_string(m) + " variant " +
                         std::to_string(static_cast<int>(variant)));
      }
    }
  }
}
#endif

// FP8 experts [E, N, K] as 2-D rows quantized on the host.
Tensor quantized_experts(int64_t experts, int64_t n, int64_t k, uint64_t seed) {
  return quantized_host(random_rounded({experts * n, k}, seed, -0.05f, 0.05f)).reshape({experts, n, k});
}

// The MoE decode path over FP8 experts at Qwen3-30B-A3B's expert shapes (12 experts): gate | up
// per token (K = 2048, 16-byte rows), down from the gated input per pair (K = 768, 8-byte rows).
TEST_F(CudaFp8Linear, ExpertLinearMatchesCpu) {
  const int64_t experts = 12, k = 8, hidden = 2048, inter = 768;
  const Tensor gate_up = quantized_experts(experts, 2 * inter, hidden, 760), down = quantized_experts(experts, hidden, inter, 761);
  const Tensor ggate_up = gpu_copy(gate_up), gdown = gpu_copy(down);
  for (const int64_t tokens : {1, 3, 8}) {
    const int64_t pairs = tokens * k;
    Tensor ids = Tensor::host(DType::kI32, {tokens, k});
    for (int64_t i = 0; i < pairs; ++i) ids.data_as<int32_t>()[i] = static_cast<int32_t>((i * 7 + i / k) % experts);
    const Tensor x = random_rounded({tokens, hidden}, 762 + tokens, -2.f, 2.f), gids = gpu_copy(ids);
    Tensor gu = Tensor::host(DType::kF32, {pairs, 2 * inter}), ys = Tensor::host(DType::kF32, {pairs, hidden});
    ops::expert_linear(x, gate_up, ids, gu);
    ops::expert_linear(gu, down, ids, ys, {.gated_input = ops::Activation::kSilu});
    Tensor ggu = poisoned(DType::kBF16, {pairs, 2 * inter}), gys = poisoned(DType::kBF16, {pairs, hidden});
    ops::expert_linear(gpu_bf16(x), ggate_up, gids, ggu);
    expect_close(*gpu_, ggu, gu, kBf16Tolerance, "fp8 expert gate_up tokens=" + std::to_string(tokens));
    ops::expert_linear(gpu_bf16(gu), gdown, gids, gys, {.gated_input = ops::Activation::kSilu});
    expect_close(*gpu_, gys, ys, kBf16Tolerance, "fp8 expert down tokens=" + std::to_string(tokens));
  }
}

// Larger steps group pairs by expert; FP8 experts are widened for the bf16 grouped kernels.
// Expert 1 has no rows, expert 3 most of them.
TEST_F(CudaFp8Linear, GroupedLinearMatchesCpu) {
  const int64_t experts = 6, n = 640, k = 1024;
  const Tensor w = quantized_experts(experts, n, k, 770), gw = gpu_copy(w);
  const std::vector<int32_t> offsets{0, 5, 5, 12, 60, 61, 70};
  Tensor off = Tensor::host(DType::kI32, {experts + 1});
  std::memcpy(off.data(), offsets.data(), offsets.size() * sizeof(int32_t));
  const Tensor x = random_rounded({offsets.back(), k}, 771, -2.f, 2.f);
  Tensor ref = Tensor::host(DType::kF32, {offsets.back(), n});
  ops::grouped_linear(x, w, off, ref);
  Tensor out = poisoned(DType::kBF16, {offsets.back(), n});
  ops::grouped_linear(gpu_bf16(x), gw, gpu_copy(off), out);
  expect_close(*gpu_, out, ref, kBf16Tolerance, "fp8 grouped_linear");
}

}  // namespace
}  // namespace strata::test
