// LayerNorm with weight and bias on CUDA against the CPU op, bf16 and f32 rows, BERT's widths
// (384, 768, 1024) and odd ones, out of place and in place; rows with a large mean, which a
// one-pass variance would lose.
#include <gtest/gtest.h>

#include <string>

#include "ops/cuda_op_support.h"
#include "strata/ops/layer_norm.h"

namespace strata::test {
namespace {

class CudaLayerNorm : public CudaOpTest {};

TEST_F(CudaLayerNorm, MatchesCpu) {
  for (const auto& [rows, dim] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 768}, {7, 384}, {130, 1024}, {3, 100}, {5, 2048}}) {
    for (float offset : {0.0f, 40.0f}) {
      const std::string what = "layer_norm " + std::to_string(rows) + "x" + std::to_string(dim) +
                               " offset " + std::to_string(offset);
      Tensor x = random_rounded({rows, dim}, 11, -3.f + offset, 3.f + offset);
      const Tensor w = random_rounded({dim}, 12, 0.5f, 1.5f), b = random_rounded({dim}, 13, -0.5f, 0.5f);
      Tensor ref = Tensor::host(DType::kF32, {rows, dim});
      ops::layer_norm(x, w, b, 1e-12f, ref);
      Tensor out = poisoned(DType::kBF16, {rows, dim});
      ops::layer_norm(gpu_bf16(x), gpu_copy(w), gpu_copy(b), 1e-12f, out);
      expect_close(*gpu_, out, ref, kBf16Tolerance, what + " bf16");
      Tensor in_place = gpu_copy(x);
      ops::layer_norm(in_place, gpu_copy(w), gpu_copy(b), 1e-12f, in_place);
      expect_close(*gpu_, in_place, ref, 1e-5, what + " f32 in place");
    }
  }
}

}  // namespace
}  // namespace strata::test
