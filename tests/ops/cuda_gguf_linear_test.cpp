// GGUF Q4_K, Q5_K, Q6_K and the 32-value Q4_0, Q4_1, Q5_0, Q5_1 weights on the GPU against the CPU
// on the same random inputs: the CUDA linear (the tensor-core GEMV at 1-32 rows, the bf16 widening
// beyond) with bias, gated input and accumulation, and MoE experts (with Q8_0 too), against f32
// math on the exactly dequantised weights; outputs poisoned first.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "ops/cuda_op_support.h"
#include "ops/quant_blocks_support.h"
#if defined(STRATA_WITH_CUDA)
#include "strata/backend/cuda/cuda_check.h"
#include "strata/ops/cuda/nibble_quant_mma_gemv.h"
#endif
#include "strata/ops/expert_linear.h"
#include "strata/ops/linear.h"
#include "strata/ops/moe.h"

namespace strata::test {
namespace {

class CudaGgufLinear : public CudaOpTest {
 protected:
  void expect_linear_matches(DType dtype, int64_t n, int64_t k) {
    const Tensor q = random_blocks(dtype, {n, k}, 900 + k), w = dequantised(q), gq = gpu_copy(q);
    const Tensor b = random_rounded({n}, 901), gb = gpu_bf16(b), b_bf16 = to_bf16_host(b);
    for (const int64_t m : {1, 2, 5, 8, 9, 16, 17, 32, 40}) {
      const Tensor x = random_rounded({m, k}, 902 + m, -2.f, 2.f), gx = gpu_bf16(x);
      const bool bias = m % 2 == 1;
      Tensor ref = Tensor::host(DType::kF32, {m, n});
      ops::linear(x, w, bias ? b_bf16 : Tensor(), ref);
      Tensor out = poisoned(DType::kF32, {m, n});
      ops::linear(gx, gq, bias ? gb : Tensor(), out);
      expect_close(*gpu_, out, ref, kBf16Tolerance,
                   std::string(dtype_name(dtype)) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
                       " m=" + std::to_string(m));
    }
  }

  // MoE prefill: the experts widened to bf16 for the grouped GEMM.
  void expect_grouped_linear_matches(DType dtype) {
    const int64_t experts = 6, n = 640, k = 1024;
    const Tensor w = random_blocks(dtype, {experts, n, k}, 930), gw = gpu_copy(w);
    const std::vector<int32_t> offsets{0, 5, 5, 12, 60, 61, 70};
    Tensor off = Tensor::host(DType::kI32, {experts + 1});
    std::memcpy(off.data(), offsets.data(), offsets.size() * sizeof(int32_t));
    const Tensor x = random_rounded({offsets.back(), k}, 931, -2.f, 2.f);
    Tensor ref = Tensor::host(DType::kF32, {offsets.back(), n});
    ops::grouped_linear(x, dequantised(w), off, ref);
    Tensor out = poisoned(DType::kBF16, {offsets.back(), n});
    ops::grouped_linear(gpu_bf16(x), gw, gpu_copy(off), out);
    expect_close(*gpu_, out, ref, kBf16Tolerance, std::string(dtype_name(dtype)) + " grouped_linear");
  }
};

#if defined(STRATA_WITH_CUDA)
TEST_F(CudaGgufLinear, Q4_KLinearMatchesCpuFromOneRowToPrefill) {
  for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{{777, 4096}, {1024, 768}, {40, 256}})
    expect_linear_matches(DType::kQ4_K, n, k);
}

TEST_F(CudaGgufLinear, Q5_KLinearMatchesCpuFromOneRowToPrefill) {
  for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{{777, 4096}, {1024, 768}, {40, 256}})
    expect_linear_matches(DType::kQ5_K, n, k);
}

TEST_F(CudaGgufLinear, Q6_KLinearMatchesCpuFromOneRowToPrefill) {
  for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{{777, 4096}, {300, 2048}})
    expect_linear_matches(DType::kQ6_K, n, k);
}

TEST_F(CudaGgufLinear, LegacyTypesLinearMatchCpuFromOneRowToPrefill) {
  for (const DType dtype : {DType::kQ4_0, DType::kQ4_1, DType::kQ5_0, DType::kQ5_1})
    for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{{777, 4096}, {1024, 768}, {40, 256}})
      expect_linear_matches(dtype, n, k);
}

// The down projection reading act(gate) * up and adding into the residual.
TEST_F(CudaGgufLinear, GatedInputAndAccumulateMatchCpu) {
  const Tensor q4 = random_blocks(DType::kQ4_K, {512, 2048}, 910);
  const Tensor q6 = random_blocks(DType::kQ6_K, {512, 2048}, 911);
  const Tensor q5 = random_blocks(DType::kQ5_K, {512, 2048}, 912);
  const Tensor q4_0 = random_blocks(DType::kQ4_0, {512, 2048}, 913);
  const Tensor q5_1 = random_blocks(DType::kQ5_1, {512, 2048}, 914);
  for (const Tensor& q : {q4, q6, q5, q4_0, q5_1}) {
    const Tensor w = dequantised(q), gq = gpu_copy(q);
    for (const int64_t m : {1, 7, 33}) expect_gated_accumulate_matches(w, gq, m, 912 + m);
  }
}

// MoE experts in pair order (Q4_K gate | up with Q4_K down; Q6_K with a Q8_0 down, whose K of
// 768 Q6_K rows cannot keep; the legacy types) against the CPU on the dequantised experts.
TEST_F(CudaGgufLinear, ExpertLinearMatchesCpu) {
  const int64_t experts = 12, k = 8, hidden = 2048, inter = 768;
  for (const auto& [gate_up_dtype, down_dtype] :
       std::vector<std::pair<DType, DType>>{{DType::kQ4_K, DType::kQ4_K}, {DType::kQ6_K, DType::kQ8_0},
                                            {DType::kQ5_K, DType::kQ5_K}, {DType::kQ4_0, DType::kQ4_0},
                                            {DType::kQ4_1, DType::kQ5_0}, {DType::kQ5_1, DType::kQ4_1}}) {
    const Tensor gate_up = random_blocks(gate_up_dtype, {experts, 2 * inter, hidden}, 920);
    const Tensor down = random_blocks(down_dtype, {experts, hidden, inter}, 921);
    const Tensor wgu = dequantised(gate_up), wd = dequantised(down), ggate_up = gpu_copy(gate_up), gdown = gpu_copy(down);
    const std::string what = std::string(dtype_name(gate_up_dtype)) + "/" + std::string(dtype_name(down_dtype));
    for (const int64_t tokens : {1, 3, 8}) {
      const int64_t pairs = tokens * k;
      Tensor ids = Tensor::host(DType::kI32, {tokens, k});
      for (int64_t i = 0; i < pairs; ++i) ids.data_as<int32_t>()[i] = static_cast<int32_t>((i * 7 + i / k) % experts);
      const Tensor x = random_rounded({tokens, hidden}, 922 + tokens, -2.f, 2.f), gids = gpu_copy(ids);
      Tensor gu = Tensor::host(DType::kF32, {pairs, 2 * inter}), ys = Tensor::host(DType::kF32, {pairs, hidden});
      ops::expert_linear(x, wgu, ids, gu);
      ops::expert_linear(gu, wd, ids, ys, {.gated_input = ops::Activation::kSilu});
      Tensor ggu = poisoned(DType::kBF16, {pairs, 2 * inter}), gys = poisoned(DType::kBF16, {pairs, hidden});
      ops::expert_linear(gpu_bf16(x), ggate_up, gids, ggu);
      expect_close(*gpu_, ggu, gu, kBf16Tolerance, what + " gate_up tokens=" + std::to_string(tokens));
      ops::expert_linear(gpu_bf16(gu), gdown, gids, gys, {.gated_input = ops::Activation::kSilu});
      expect_close(*gpu_, gys, ys, kBf16Tolerance, what + " down tokens=" + std::to_string(tokens));
    }
  }
}

// The two-block launch shapes of the dense GEMV at 1-8 rows over short and long rows.
TEST_F(CudaGgufLinear, DenseLaunchShapesMatchCpu) {
  using cuda::NibbleMmaGemvVariant;
  for (const DType dtype : {DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kQ4_0, DType::kQ5_1}) {
    for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{{777, 14336}, {300, 768}}) {
      const Tensor q = random_blocks(dtype, {n, k}, 960 + k), w = dequantised(q), gq = gpu_copy(q);
      for (const int64_t m : {1, 3, 8}) {
        const Tensor x = random_rounded({m, k}, 961 + m, -2.f, 2.f), gx = gpu_bf16(x);
        Tensor ref = Tensor::host(DType::kF32, {m, n});
        ops::linear(x, w, Tensor(), ref);
        for (const NibbleMmaGemvVariant variant :
             {NibbleMmaGemvVariant::kWarps8TwoBlocks, NibbleMmaGemvVariant::kPersistent}) {
          Tensor out = poisoned(DType::kF32, {m, n});
          const cuda::QuantGemvArgs args{.x = gx.data(), .weight = gq.data(), .out = out.data(),
                                         .out_dtype = DType::kF32, .m = m, .n = n, .k = k};
          if (!cuda::nibble_quant_mma_gemv_supported(dtype, args)) continue;
          cuda::nibble_quant_mma_gemv(dtype, args, cuda::current_stream(), variant);
          expect_close(*gpu_, out, ref, kBf16Tolerance,
                       std::string(dtype_name(dtype)) + " k=" + std::to_string(k) + " m=" + std::to_string(m) +
                           " variant=" + std::to_string(static_cast<int>(variant)));
        }
      }
    }
  }
}

// Every launch shape of the expert GEMV (one or two blocks a SM, persistent over the tiles of
// every pair, 8 / 4 / 2 warps) at gate | up's shape (one x row for k pairs) and down's.
TEST_F(CudaGgufLinear, ExpertLaunchShapesMatchCpu) {
  using cuda::NibbleMmaGemvVariant;
  const int64_t experts = 12, k = 8;
  for (const DType dtype : {DType::kQ4_K, DType::kQ5_K, DType::kQ6_K, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0,
                            DType::kQ5_1}) {
    for (const auto& [n, kk, per_x] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1536, 2048, k}, {2048, 768, 1}}) {
      const Tensor q = random_blocks(dtype, {experts, n, kk}, 940 + n), w = dequantised(q), gq = gpu_copy(q);
      for (const int64_t tokens : {1, 8}) {
        const int64_t pairs = tokens * k;
        Tensor ids = Tensor::host(DType::kI32, {tokens, k});  // [tokens, k]: the kernel reads them flat, pair by pair
        for (int64_t i = 0; i < pairs; ++i) ids.data_as<int32_t>()[i] = static_cast<int32_t>((i * 5 + i / k) % experts);
        const Tensor x = random_rounded({pairs / per_x, kk}, 950 + tokens, -2.f, 2.f), gx = gpu_bf16(x);
        const Tensor gids = gpu_copy(ids);
        Tensor ref = Tensor::host(DType::kF32, {pairs, n});
        ops::expert_linear(x, w, ids, ref);
        for (const NibbleMmaGemvVariant variant :
             {NibbleMmaGemvVariant::kAuto, NibbleMmaGemvVariant::kWarps8, NibbleMmaGemvVariant::kWarps4,
              NibbleMmaGemvVariant::kWarps2, NibbleMmaGemvVariant::kWarps8TwoBlocks, NibbleMmaGemvVariant::kPersistent}) {
          Tensor out = poisoned(DType::kBF16, {pairs, n});
          const cuda::QuantExpertArgs args{.x = gx.data(), .weights = gq.data(), .expert_ids = gids.data_as<int32_t>(),
                                           .out = out.data(), .num_pairs = pairs, .n = n, .k = kk, .pairs_per_x = per_x};
          if (!cuda::nibble_quant_mma_gemv_experts_supported(dtype, args)) continue;
          cuda::nibble_quant_mma_gemv_experts(dtype, args, cuda::current_stream(), variant);
          expect_close(*gpu_, out, ref, kBf16Tolerance,
                       std::string(dtype_name(dtype)) + " k=" + std::to_string(kk) + " tokens=" + std::to_string(tokens) +
                           " variant=" + std::to_string(static_cast<int>(variant)));
        }
      }
    }
  }
}

TEST_F(CudaGgufLinear, GroupedLinearWidensAndMatchesCpu) {
  for (const DType dtype : {DType::kQ4_K, DType::kQ4_0, DType::kQ5_1}) expect_grouped_linear_matches(dtype);
}
#endif

}  // namespace
}  // namespace strata::test
