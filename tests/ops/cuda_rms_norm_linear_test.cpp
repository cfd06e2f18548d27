// rms_norm_linear on the GPU against the CPU (rms_norm, then linear) on the same random inputs,
// at the GEMV's rows (1-2) and past them. Both the product and the stored h are checked,
// outputs poisoned first; bf16 and f32
// norm weights, unit-offset weights, a bias, and the router's f32 logits.
#include <gtest/gtest.h>

#include <string>

#include "ops/cuda_op_support.h"
#include "strata/ops/rms_norm_linear.h"

namespace strata::test {
namespace {

using CudaRmsNormLinear = CudaOpTest;

struct NormedShape {
  const char* name;
  int64_t n, k;
  DType out_dtype;
};

TEST_F(CudaRmsNormLinear, GemvAndGemmRowsMatchCpu) {
  // Llama-3.1-8B's qkv, Qwen3-30B-A3B's router (f32 logits), a short row.
  for (const NormedShape& s : {NormedShape{"qkv", 6144, 4096, DType::kBF16}, NormedShape{"router", 128, 2048, DType::kF32},
                               NormedShape{"short", 512, 256, DType::kBF16}}) {
    const Tensor w = random_rounded({s.n, s.k}, 700 + s.n, -0.05f, 0.05f), b = random_rounded({s.n}, 701);
    const Tensor norm_w = random_rounded({s.k}, 702, 0.5f, 1.5f);
    for (const bool f32_norm : {false, true}) {
      for (const bool unit_offset : {false, true}) {
        const ops::RmsNormParams params{.eps = 1e-5f, .unit_offset = unit_offset};
        const Tensor gpu_norm = f32_norm ? gpu_copy(norm_w) : gpu_bf16(norm_w);
        for (const int64_t m : {1, 2, 3}) {
          // Activations of a residual stream: magnitudes far from 1, so the norm matters.
          const Tensor x = random_rounded({m, s.k}, 703 + m, -8.0f, 8.0f);
          Tensor ref_h = Tensor::host(DType::kF32, {m, s.k}), ref = Tensor::host(DType::kF32, {m, s.n});
          ops::rms_norm_linear({.x = x, .norm_weight = norm_w, .norm = params, .h = ref_h,
                                .weight = to_bf16_host(w), .bias = to_bf16_host(b), .out = ref});
          Tensor h = poisoned(DType::kBF16, {m, s.k}), out = poisoned(s.out_dtype, {m, s.n});
          ops::rms_norm_linear({.x = gpu_bf16(x), .norm_weight = gpu_norm, .norm = params, .h = h,
                                .weight = gpu_bf16(w), .bias = gpu_bf16(b), .out = out});
          const std::string what = std::string(s.name) + " m=" + std::to_string(m) + (f32_norm ? " f32" : " bf16") +
                                   " norm" + (unit_offset ? " offset" : "");
          expect_close(*gpu_, h, ref_h, kBf16Tolerance, what + " h");
          expect_close(*gpu_, out, ref, kBf16Tolerance, what + " out");
        }
      }
    }
  }
}

}  // namespace
}  // namespace strata::test
