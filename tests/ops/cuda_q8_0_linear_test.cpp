// GGUF Q8_0 weights on the GPU against the CPU on the same random inputs: the CUDA linear (the
// tensor-core GEMV at 1-32 rows, the bf16 widening beyond) with bias, gated input and
// accumulation, against f32 math on the exactly dequantised weights; outputs poisoned first.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ops/cuda_op_support.h"
#include "ops/quant_blocks_support.h"
#include "strata/ops/linear.h"
#include "strata/weights/quant_blocks.h"

namespace strata::test {
namespace {

using CudaQ8_0Linear = CudaOpTest;

#if defined(STRATA_WITH_CUDA)
// [n, k] Q8_0 with codes over the whole int8 range and f16 scales in [2^-12, 2^-7).
Tensor random_q8_0(int64_t n, int64_t k, uint64_t seed) {
  Tensor q = Tensor::host(DType::kQ8_0, {n, k});
  auto* blocks = static_cast<BlockQ8_0*>(q.data());
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  for (int64_t i = 0; i < n * k / kQk; ++i) {
    blocks[i].d = static_cast<uint16_t>(0x0c00 + next() % 0x1400);  // f16 exponents 3..7: 2^-12 .. 2^-8
    for (int j = 0; j < kQk; ++j) blocks[i].qs[j] = static_cast<int8_t>(next() % 256 - 128);
  }
  return q;
}

TEST_F(CudaQ8_0Linear, LinearMatchesCpuFromOneRowToPrefill) {
  for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{{777, 4096}, {1024, 1152}, {256, 96}}) {
    const Tensor q = random_q8_0(n, k, 800 + k), w = dequantised(q), gq = gpu_copy(q);
    const Tensor b = random_rounded({n}, 801), gb = gpu_bf16(b), b_bf16 = to_bf16_host(b);
    for (const int64_t m : {1, 2, 5, 8, 9, 16, 17, 32, 40}) {
      const Tensor x = random_rounded({m, k}, 802 + m, -2.f, 2.f), gx = gpu_bf16(x);
      const bool bias = m % 2 == 1;
      Tensor ref = Tensor::host(DType::kF32, {m, n});
      ops::linear(x, w, bias ? b_bf16 : Tensor(), ref);
      Tensor out = poisoned(DType::kF32, {m, n});
      ops::linear(gx, gq, bias ? gb : Tensor(), out);
      expect_close(*gpu_, out, ref, kBf16Tolerance, "n=" + std::to_string(n) + " k=" + std::to_string(k) + " m=" +
                                                        std::to_string(m));
    }
  }
}

// The down projection reading act(gate) * up and adding into the residual.
TEST_F(CudaQ8_0Linear, GatedInputAndAccumulateMatchCpu) {
  const int64_t n = 512, k = 2048;
  const Tensor q = random_q8_0(n, k, 810), w = dequantised(q), gq = gpu_copy(q);
  for (const int64_t m : {1, 7, 33}) expect_gated_accumulate_matches(w, gq, m, 811 + m);
}
#endif

}  // namespace
}  // namespace strata::test
