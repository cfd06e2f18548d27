// --quantization fp8 on a bf16 checkpoint: the linears load as FP8 (1.03 bytes a value where
// bf16 had 2), the rest as stored, and the logits stay within the quantization error of
// transformers' reference on the bf16 weights.
#include <gtest/gtest.h>

#include <cmath>

#include "model/fixture_support.h"
#include "test_support.h"

namespace strata::test {
namespace {

TEST(Fp8Quantization, QuantizedLlamaStaysNearTransformers) {
  Fixture f = load_fixture("llama");
  auto cpu = make_cpu_backend(2);
  LoadedModel fp8 = load_model({.model_path = fixture_path("hf/llama"), .quantization = WeightQuantization::kFp8}, *cpu);
  // llama fixture: 3 layers of q,k,v,o (128 x 128 x 2 + 64 x 128 x 2) and gate, up, down (256 x 128 x 3).
  const int64_t linear_values = 3 * (2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128);
  EXPECT_EQ(f.loaded.weights->num_bytes() - fp8.weights->num_bytes(), linear_values * 2 - linear_values * 132 / 128);
  ModelRunner runner(*fp8.model, *cpu, {});
  double num = 0, den = 0;
  int64_t same = 0, rows = 0;
  for (const FixtureSequence& seq : f.sequences) {
    const Tensor got = run_sequence(runner, seq.tokens, seq.prompt_len, 0);
    const int64_t vocab = got.dim(1);
    for (int64_t r = 0; r < got.dim(0); ++r, ++rows) {
      const float* g = got.data_as<float>() + r * vocab;
      const float* e = seq.logits.data_as<float>() + r * vocab;
      int64_t g_top = 0, e_top = 0;
      for (int64_t v = 0; v < vocab; ++v) {
        num += (g[v] - e[v]) * (g[v] - e[v]);
        den += e[v] * e[v];
        if (g[v] > g[g_top]) g_top = v;
        if (e[v] > e[e_top]) e_top = v;
      }
      same += g_top == e_top;
    }
  }
  const double rel_l2 = std::sqrt(num / den), top1 = static_cast<double>(same) / static_cast<double>(rows);
  std::printf("[fp8 at load, llama fixture] rel_l2 %.3e top1 %.3f\n", rel_l2, top1);
  EXPECT_LT(rel_l2, 5e-2);
  EXPECT_GE(top1, 0.9);
}

}  // namespace
}  // namespace strata::test
