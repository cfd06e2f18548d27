// GGUF Q4_K and Q6_K weights on the GPU against the CPU on the same random inputs: the CUDA
// linear (the tensor-core GEMV at 1-32 rows, the bf16 widening beyond) with bias, gated input
// and accumulation, against f32 math on the exactly dequantised weights; outputs poisoned first.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "ops/cuda_op_support.h"
#include "strata/ops/linear.h"
#include "strata/weights/dequantize.h"
#include "strata/weights/quant_blocks.h"

namespace strata::test {
namespace {


// [n, k] blocks of random bytes (every byte pattern is a valid code or packed scale) with f16
// super-block scales in [2^-12, 2^-8): values of a few hundredths, like real weights.
template <typename Block>
Tensor random_k_quant(DType dtype, int64_t n, int64_t k, uint64_t seed) {
  Tensor q = Tensor::host(dtype, {n, k});
  auto* bytes = static_cast<uint8_t*>(q.data());
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  for (int64_t i = 0; i < q.nbytes(); ++i) bytes[i] = static_cast<uint8_t>(next());
  auto* blocks = static_cast<Block*>(q.data());
  for (int64_t b = 0; b < n * k / kQkK; ++b) {
    if constexpr (std::is_same_v<Block, BlockQ4_K>) {
      blocks[b].d = static_cast<uint16_t>(0x0c00 + next() % 0x1000);     // 2^-12 .. 2^-9
      blocks[b].dmin = static_cast<uint16_t>(0x0c00 + next() % 0x1000);
    } else {
      blocks[b].d = static_cast<uint16_t>(0x0400 + next() % 0x1000);     // 2^-14 .. 2^-11 (int8 scales)
    }
  }
  return q;
}

Tensor dequantised(const Tensor& q) {
  Tensor w = Tensor::host(DType::kF32, q.shape());
  for (int64_t r = 0; r < q.dim(0); ++r)
    dequantize_row(q.dtype(), static_cast<const char*>(q.data()) + r * q.row_bytes(),
                   w.data_as<float>() + r * q.dim(1), q.dim(1));
  return w;
}

class CudaKQuantLinear : public CudaOpTest {
 protected:
  template <typename Block>
  void expect_linear_matches(DType dtype, int64_t n, int64_t k) {
    const Tensor q = random_k_quant<Block>(dtype, n, k, 900 + k), w = dequantised(q), gq = gpu_copy(q);
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
};

#if defined(STRATA_WITH_CUDA)
TEST_F(CudaKQuantLinear, Q4_KLinearMatchesCpuFromOneRowToPrefill) {
  for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{{777, 4096}, {1024, 768}, {40, 256}})
    expect_linear_matches<BlockQ4_K>(DType::kQ4_K, n, k);
}

TEST_F(CudaKQuantLinear, Q6_KLinearMatchesCpuFromOneRowToPrefill) {
  for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{{777, 4096}, {300, 2048}})
    expect_linear_matches<BlockQ6_K>(DType::kQ6_K, n, k);
}

// The down projection reading act(gate) * up and adding into the residual.
TEST_F(CudaKQuantLinear, GatedInputAndAccumulateMatchCpu) {
  const Tensor q4 = random_k_quant<BlockQ4_K>(DType::kQ4_K, 512, 2048, 910);
  const Tensor q6 = random_k_quant<BlockQ6_K>(DType::kQ6_K, 512, 2048, 911);
  for (const Tensor& q : {q4, q6}) {
    const Tensor w = dequantised(q), gq = gpu_copy(q);
    for (const int64_t m : {1, 7, 33}) expect_gated_accumulate_matches(w, gq, m, 912 + m);
  }
}
#endif

}  // namespace
}  // namespace strata::test
