// The CUDA linear at decode row counts (1-4 rows, where it streams weights with the
// register-streaming GEMV) against the CPU linear at Llama-3.1-8B shapes, bf16 and f32 outputs poisoned
// first, with and without bias; the gated-input and accumulating forms; the bulk and persistent
// streaming kernels called directly at every row count they take; the fixed rule that picks
// the dense kernel.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ops/cuda_op_support.h"
#include "strata/ops/expert_linear.h"
#include "strata/ops/linear.h"
#if defined(STRATA_WITH_CUDA)
#include "strata/backend/cuda/cuda_check.h"
#include "strata/ops/cuda/cublaslt_gemm.h"
#include "strata/ops/cuda/dense_linear.h"
#include "strata/ops/cuda/stream_gemv.h"
#include "strata/ops/cuda/warp_gemv.h"
#endif

namespace strata::test {
namespace {

using CudaDenseLinear = CudaOpTest;

struct DenseShape {
  const char* name;
  int64_t n, k;
};

// Llama-3.1-8B: o_proj, fused qkv, fused gate_up, down.
const std::vector<DenseShape> kLlamaShapes{
    {"o_proj", 4096, 4096}, {"qkv", 6144, 4096}, {"gate_up", 28672, 4096}, {"down", 4096, 14336}};

std::string label(const DenseShape& s, int64_t m, DType out_dtype, bool bias) {
  return std::string(s.name) + " m=" + std::to_string(m) + " " + std::string(dtype_name(out_dtype)) +
         (bias ? " bias" : "");
}

TEST_F(CudaDenseLinear, DecodeRowsMatchCpuAtLlamaShapes) {
  for (const DenseShape& s : kLlamaShapes) {
    const Tensor w = random_rounded({s.n, s.k}, 600 + s.n, -0.05f, 0.05f), b = random_rounded({s.n}, 601);
    const Tensor gw = gpu_bf16(w), gb = gpu_bf16(b), w_bf16 = to_bf16_host(w), b_bf16 = to_bf16_host(b);
    for (int64_t m = 1; m <= 4; ++m) {
      const Tensor x = random_rounded({m, s.k}, 602 + m), gx = gpu_bf16(x);
      for (const bool bias : {false, true}) {
        Tensor ref = Tensor::host(DType::kF32, {m, s.n});
        ops::linear(x, w_bf16, bias ? b_bf16 : Tensor(), ref);
        for (const DType out_dtype : {DType::kBF16, DType::kF32}) {
          Tensor out = poisoned(out_dtype, {m, s.n});
          ops::linear(gx, gw, bias ? gb : Tensor(), out);
          expect_close(*gpu_, out, ref, kBf16Tolerance, label(s, m, out_dtype, bias));
        }
      }
    }
  }
}

// Llama-3's lm_head: 128256 f32 logits per row.
TEST_F(CudaDenseLinear, LmHeadLogitsMatchCpu) {
  const DenseShape s{"lm_head", 128256, 4096};
  const Tensor w = random_rounded({s.n, s.k}, 610, -0.05f, 0.05f), gw = gpu_bf16(w), w_bf16 = to_bf16_host(w);
  for (const int64_t m : {1, 4}) {
    const Tensor x = random_rounded({m, s.k}, 611 + m);
    Tensor ref = Tensor::host(DType::kF32, {m, s.n});
    ops::linear(x, w_bf16, Tensor(), ref);
    Tensor out = poisoned(DType::kF32, {m, s.n});
    ops::linear(gpu_bf16(x), gw, Tensor(), out);
    expect_close(*gpu_, out, ref, kBf16Tolerance, label(s, m, DType::kF32, false));
  }
}

// The MLP's down projection reading act(gate) * up from the fused gate | up output and adding
// into the residual: fused in the GEMV at 1-2 rows, activation + cuBLASLt (beta 1) from 3.
TEST_F(CudaDenseLinear, GatedInputAndAccumulateMatchCpu) {
  const DenseShape s{"down", 4096, 14336};
  const Tensor w = random_rounded({s.n, s.k}, 630, -0.05f, 0.05f), b = random_rounded({s.n}, 631);
  const Tensor gw = gpu_bf16(w), gb = gpu_bf16(b), w_bf16 = to_bf16_host(w), b_bf16 = to_bf16_host(b);
  for (const int64_t m : {1, 2, 3, 5}) {
    const Tensor x = random_rounded({m, 2 * s.k}, 632 + m, -3.f, 3.f), gx = gpu_bf16(x);
    const Tensor residual = random_rounded({m, s.n}, 640 + m, -4.f, 4.f);
    for (const ops::Activation act : {ops::Activation::kSilu, ops::Activation::kGeluTanh,
                                      ops::Activation::kClampedSwiglu}) {
      for (const bool accumulate : {false, true}) {
        const bool bias = accumulate;  // one of each, to keep the run short
        Tensor ref = Tensor::host(DType::kF32, {m, s.n});
        if (accumulate) std::memcpy(ref.data(), residual.data(), static_cast<size_t>(residual.numel()) * sizeof(float));
        ops::linear(x, w_bf16, bias ? b_bf16 : Tensor(), ref,
                    {.gated_input = act, .gated_scratch = Tensor::host(DType::kF32, {m, s.k}),
                     .accumulate = accumulate});
        for (const DType out_dtype : {DType::kBF16, DType::kF32}) {
          Tensor out = accumulate ? (out_dtype == DType::kBF16 ? gpu_bf16(residual) : gpu_copy(residual))
                                  : poisoned(out_dtype, {m, s.n});
          ops::linear(gx, gw, bias ? gb : Tensor(), out,
                      {.gated_input = act, .gated_scratch = poisoned(DType::kBF16, {m, s.k}),
                       .accumulate = accumulate});
          expect_close(*gpu_, out, ref, kBf16Tolerance,
                       label(s, m, out_dtype, bias) + " act " + std::to_string(static_cast<int>(act)) +
                           (accumulate ? " accumulate" : ""));
        }
      }
    }
  }
}

#if defined(STRATA_WITH_CUDA)
// Prefill row counts of one bucket (33-64): the first is tuned, the others take its algorithm
// where cuBLASLt accepts it; each exact m still gets a plan of its own, and all match the CPU.
TEST_F(CudaDenseLinear, RowCountsOfABucketShareTheTunedAlgorithm) {
  const DenseShape s{"qkv", 6144, 4096};
  const Tensor w = random_rounded({s.n, s.k}, 650, -0.05f, 0.05f), gw = gpu_bf16(w), w_bf16 = to_bf16_host(w);
  const int64_t plans_before = cuda::gemm_plan_count();
  for (const int64_t m : {40, 33, 47, 64}) {
    const Tensor x = random_rounded({m, s.k}, 651 + m);
    Tensor ref = Tensor::host(DType::kF32, {m, s.n});
    ops::linear(x, w_bf16, Tensor(), ref);
    Tensor out = poisoned(DType::kBF16, {m, s.n});
    ops::linear(gpu_bf16(x), gw, Tensor(), out);
    expect_close(*gpu_, out, ref, kBf16Tolerance, label(s, m, DType::kBF16, false));
  }
  EXPECT_EQ(cuda::gemm_plan_count() - plans_before, 4);
}
#endif

#if defined(STRATA_WITH_CUDA)
// The bulk kernel itself at every row count it takes, odd N and a K that splits over warps.
TEST_F(CudaDenseLinear, BulkKernelMatchesCpuUpToEightRows) {
  for (const DenseShape& s : std::vector<DenseShape>{{"odd n", 1000, 2048}, {"long k", 300, 12288}, {"short k", 77, 64}}) {
    const Tensor w = random_rounded({s.n, s.k}, 620, -0.05f, 0.05f), b = random_rounded({s.n}, 621);
    const Tensor gw = gpu_bf16(w), gb = gpu_bf16(b);
    for (int64_t m = 1; m <= 8; ++m) {
      const Tensor x = random_rounded({m, s.k}, 622 + m), gx = gpu_bf16(x);
      Tensor ref = Tensor::host(DType::kF32, {m, s.n});
      ops::linear(x, to_bf16_host(w), to_bf16_host(b), ref);
      Tensor out = poisoned(DType::kF32, {m, s.n});
      const cuda::GroupedGemmArgs args{.x = gx.data(), .weight = gw.data(), .offsets = nullptr, .out = out.data(),
                                       .out_dtype = DType::kF32, .num_experts = 1, .m = m, .n = s.n, .k = s.k,
                                       .bias = gb.data()};
      ASSERT_TRUE(cuda::bulk_gemv_supported(args)) << s.name;
      cuda::bulk_gemv(args, cuda::current_stream());
      expect_close(*gpu_, out, ref, kBf16Tolerance, label(s, m, DType::kF32, true));
    }
  }
}

// The streaming kernel at every row count it takes: odd N (a short last item), long K (one row
// per item, K split over 8 warps), short K (32 rows per item), with bias.
TEST_F(CudaDenseLinear, StreamKernelMatchesCpuUpToFourRows) {
  for (const DenseShape& s : std::vector<DenseShape>{{"odd n", 1001, 2048}, {"long k", 300, 14336}, {"short k", 77, 64}}) {
    const Tensor w = random_rounded({s.n, s.k}, 630, -0.05f, 0.05f), b = random_rounded({s.n}, 631);
    const Tensor gw = gpu_bf16(w), gb = gpu_bf16(b);
    for (int64_t m = 1; m <= cuda::kStreamGemvMaxRows; ++m) {
      const Tensor x = random_rounded({m, s.k}, 632 + m), gx = gpu_bf16(x);
      Tensor ref = Tensor::host(DType::kF32, {m, s.n});
      ops::linear(x, to_bf16_host(w), to_bf16_host(b), ref);
      for (const DType out_dtype : {DType::kBF16, DType::kF32}) {
        Tensor out = poisoned(out_dtype, {m, s.n});
        const cuda::GroupedGemmArgs args{.x = gx.data(), .weight = gw.data(), .offsets = nullptr, .out = out.data(),
                                         .out_dtype = out_dtype, .num_experts = 1, .m = m, .n = s.n, .k = s.k,
                                         .bias = gb.data()};
        ASSERT_TRUE(cuda::stream_gemv_supported(args)) << s.name;
        cuda::stream_gemv(args, cuda::current_stream());
        expect_close(*gpu_, out, ref, kBf16Tolerance, label(s, m, out_dtype, true));
      }
    }
  }
}

// The register-streaming kernel, every variant at every row count it takes: odd N (a warp's
// last rows past N), a long K that is no multiple of a full unrolled pass, a short K, bias.
TEST_F(CudaDenseLinear, WarpKernelVariantsMatchCpuUpToEightRows) {
  const cuda::WarpGemvVariant variants[] = {cuda::WarpGemvVariant::kAuto, cuda::WarpGemvVariant::kRows1Unroll8,
                                            cuda::WarpGemvVariant::kRows2Unroll4, cuda::WarpGemvVariant::kRows4Unroll2,
                                            cuda::WarpGemvVariant::kRows2Unroll8,
                                            cuda::WarpGemvVariant::kRows1Unroll8Warps4};
  for (const DenseShape& s : std::vector<DenseShape>{{"odd n", 1001, 2048}, {"long k", 300, 5128}, {"short k", 77, 64}}) {
    const Tensor w = random_rounded({s.n, s.k}, 640, -0.05f, 0.05f), b = random_rounded({s.n}, 641);
    const Tensor gw = gpu_bf16(w), gb = gpu_bf16(b);
    for (int64_t m = 1; m <= cuda::kWarpGemvMaxRows; ++m) {
      const Tensor x = random_rounded({m, s.k}, 642 + m), gx = gpu_bf16(x);
      Tensor ref = Tensor::host(DType::kF32, {m, s.n});
      ops::linear(x, to_bf16_host(w), to_bf16_host(b), ref);
      for (const cuda::WarpGemvVariant variant : variants)
        for (const DType out_dtype : {DType::kBF16, DType::kF32}) {
          Tensor out = poisoned(out_dtype, {m, s.n});
          const cuda::GroupedGemmArgs args{.x = gx.data(), .weight = gw.data(), .offsets = nullptr,
                                           .out = out.data(), .out_dtype = out_dtype, .num_experts = 1,
                                           .m = m, .n = s.n, .k = s.k, .bias = gb.data()};
          ASSERT_TRUE(cuda::warp_gemv_supported(args)) << s.name;
          cuda::warp_gemv(args, cuda::current_stream(), variant);
          expect_close(*gpu_, out, ref, kBf16Tolerance,
                       label(s, m, out_dtype, true) + " variant " + std::to_string(static_cast<int>(variant)));
        }
    }
  }
}

// Expert pairs through every launch shape warp_gemv_experts takes: a gate | up shape (one x
// row feeds a token's k pairs) and a short down shape reading act(gate) * up, odd N.
TEST_F(CudaDenseLinear, WarpKernelExpertShapesMatchCpu) {
  const cuda::WarpGemvVariant variants[] = {
      cuda::WarpGemvVariant::kAuto,         cuda::WarpGemvVariant::kRows2Unroll3,
      cuda::WarpGemvVariant::kRows4Unroll3, cuda::WarpGemvVariant::kRows2Unroll3Warps4,
      cuda::WarpGemvVariant::kRows1Unroll3Warps4, cuda::WarpGemvVariant::kRows2Unroll8,
      cuda::WarpGemvVariant::kRows1Unroll8};
  const int64_t experts = 6, tokens = 3, top_k = 2;
  std::vector<int32_t> picks{4, 1, 0, 5, 1, 3};  // [tokens, top_k]
  Tensor ids = Tensor::host(DType::kI32, {tokens, top_k});
  std::memcpy(ids.data(), picks.data(), picks.size() * sizeof(int32_t));
  for (const bool gated : {false, true}) {
    const int64_t n = gated ? 301 : 333, k = gated ? 768 : 2048, x_rows = gated ? tokens * top_k : tokens;
    const Tensor w = random_rounded({experts, n, k}, 660 + gated, -0.05f, 0.05f);
    const Tensor x = random_rounded({x_rows, gated ? 2 * k : k}, 661 + gated), gw = gpu_bf16(w), gx = gpu_bf16(x);
    const Tensor gids = gpu_->from_host(ids);
    ops::ExpertLinearOptions options;
    if (gated) options.gated_input = ops::Activation::kSilu;
    Tensor ref = Tensor::host(DType::kF32, {tokens * top_k, n});
    ops::expert_linear(x, to_bf16_host(w), ids, ref, options);  // f32 x, as the CPU backend takes it
    for (const cuda::WarpGemvVariant variant : variants) {
      Tensor out = poisoned(DType::kBF16, {tokens * top_k, n});
      cuda::WarpGemvExpertArgs args{.x = gx.data(), .weights = gw.data(), .expert_ids = gids.data_as<int32_t>(),
                                    .out = out.data(), .num_pairs = tokens * top_k, .num_experts = experts, .n = n,
                                    .k = k, .pairs_per_x = gated ? 1 : top_k, .gated_input = options.gated_input,
                                    .variant = variant};
      ASSERT_TRUE(cuda::warp_gemv_experts_supported(args));
      cuda::warp_gemv_experts(args, cuda::current_stream());
      expect_close(*gpu_, out, ref, kBf16Tolerance,
                   std::string(gated ? "down" : "gate_up") + " variant " + std::to_string(static_cast<int>(variant)));
    }
  }
}

TEST(CudaDenseLinearRule, StreamsUpToTwoRowsElseCublasLt) {
  alignas(16) static const uint16_t dummy[8] = {};
  cuda::GroupedGemmArgs args{.x = dummy, .weight = dummy, .offsets = nullptr, .out = nullptr,
                             .num_experts = 1, .m = 1, .n = 4096, .k = 4096};
  EXPECT_EQ(cuda::dense_linear_kernel(args), cuda::DenseKernel::kWarpStreaming);
  args.m = 2;
  EXPECT_EQ(cuda::dense_linear_kernel(args), cuda::DenseKernel::kWarpStreaming);
  args.m = 3;
  EXPECT_EQ(cuda::dense_linear_kernel(args), cuda::DenseKernel::kCublasLt);
  args.m = 2;
  args.k = 14336;  // Llama-3 down: 56 KB of x in shared memory
  EXPECT_EQ(cuda::dense_linear_kernel(args), cuda::DenseKernel::kWarpStreaming);
  args.k = 65536;  // 256 KB of x: more than shared memory holds
  EXPECT_EQ(cuda::dense_linear_kernel(args), cuda::DenseKernel::kCublasLt);
  args.m = 1;
  args.k = 100;  // not a multiple of 8
  EXPECT_EQ(cuda::dense_linear_kernel(args), cuda::DenseKernel::kCublasLt);
  args.k = 4096;
  args.x = dummy + 1;  // 2-byte aligned rows
  EXPECT_EQ(cuda::dense_linear_kernel(args), cuda::DenseKernel::kCublasLt);
}
#endif

}  // namespace
}  // namespace strata::test
