// --quantization fp8 on a bf16 checkpoint: the linears load as FP8 (1.03 bytes a value where
// bf16 had 2), the rest as stored, and the logits stay as near transformers' bf16 reference as
// the llama_fp8 checkpoint's (transformers' own FP8, coarser 128 x 128 blocks) on the same tokens.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "model/fixture_support.h"
#include "test_support.h"

namespace strata::test {
namespace {

struct Fp8Error {
  double rel_l2 = 0, top1 = 0;  // relative L2 of all logits; share of rows whose argmax agrees
};

// `model` teacher-forced on the reference's sequences, against the reference's logits.
Fp8Error error_against(const Fixture& reference, const LoadedModel& model, Backend& cpu) {
  ModelRunner runner(*model.model, cpu, {});
  double num = 0, den = 0;
  int64_t same = 0, rows = 0;
  for (const FixtureSequence& seq : reference.sequences) {
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
  return {std::sqrt(num / den), static_cast<double>(same) / static_cast<double>(rows)};
}

TEST(Fp8Quantization, QuantizedLlamaIsAsNearAsTransformersFp8) {
  Fixture f = load_fixture("llama");
  auto cpu = make_cpu_backend(2);
  LoadedModel fp8 = load_model({.model_path = fixture_path("hf/llama"), .quantization = WeightQuantization::kFp8}, *cpu);
  // llama fixture: 3 layers of q,k,v,o (128 x 128 x 2 + 64 x 128 x 2) and gate, up, down (256 x 128 x 3).
  const int64_t linear_values = 3 * (2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128);
  EXPECT_EQ(f.loaded.weights->num_bytes() - fp8.weights->num_bytes(), linear_values * 2 - linear_values * 132 / 128);
  LoadedModel transformers_fp8 = load_model({.model_path = fixture_path("hf/llama_fp8")}, *cpu);
  const Fp8Error ours = error_against(f, fp8, *cpu), theirs = error_against(f, transformers_fp8, *cpu);
  std::printf("[llama fixture] fp8 at load: rel_l2 %.3e top1 %.3f; llama_fp8 (128x128): rel_l2 %.3e top1 %.3f\n",
              ours.rel_l2, ours.top1, theirs.rel_l2, theirs.top1);
  EXPECT_GT(ours.rel_l2, 0.0);  // quantized at all
  EXPECT_LT(ours.rel_l2, 1.25 * theirs.rel_l2);
  EXPECT_GE(ours.top1, theirs.top1 - 0.05);
}

}  // namespace
}  // namespace strata::test
