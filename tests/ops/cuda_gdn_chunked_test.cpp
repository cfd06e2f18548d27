// The chunked CUDA gated delta rule (prefill rows) against the CPU op on the same random
// bf16-rounded inputs, from a random carried state, at the Qwen3-Next shape and the fixture
// shape, for full, partial and many chunks; and which form a CUDA segment takes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/cuda_op_support.h"
#include "test_support.h"
#include "strata/ops/gated_delta_rule.h"

namespace strata::test {
namespace {

using CudaGdnChunked = CudaOpTest;
using ops::GatedDeltaRuleForm;

struct GdnShape {
  int64_t nv, nk, dk, dv;
};
constexpr GdnShape kQwen3Next{32, 16, 128, 128};
constexpr GdnShape kFixture{4, 2, 32, 32};

TEST(CudaGdnChunkedForm, LongPrefillRowsChunkShortAndVerifyRowsRecur) {
  using ops::gated_delta_rule_cuda_form;
  EXPECT_EQ(gated_delta_rule_cuda_form(63, 128, 128, false), GatedDeltaRuleForm::kRecurrent);
  EXPECT_EQ(gated_delta_rule_cuda_form(1, 128, 128, false), GatedDeltaRuleForm::kRecurrent);
  EXPECT_EQ(gated_delta_rule_cuda_form(64, 128, 128, false), GatedDeltaRuleForm::kChunked);
  EXPECT_EQ(gated_delta_rule_cuda_form(4096, 32, 32, false), GatedDeltaRuleForm::kChunked);
  EXPECT_EQ(gated_delta_rule_cuda_form(4096, 64, 96, false), GatedDeltaRuleForm::kChunked);
  EXPECT_EQ(gated_delta_rule_cuda_form(4096, 128, 128, true), GatedDeltaRuleForm::kRecurrent);
  EXPECT_EQ(gated_delta_rule_cuda_form(4096, 256, 128, false), GatedDeltaRuleForm::kRecurrent);
  EXPECT_EQ(gated_delta_rule_cuda_form(4096, 128, 48, false), GatedDeltaRuleForm::kRecurrent);
}

// CPU op (f32) and CUDA op (bf16 activations, f32 state) on one random segment.
void check_against_cpu(Backend& gpu, const GdnShape& s, int64_t tokens, uint64_t seed) {
  const int64_t width = 2 * s.nk * s.dk + s.nv * s.dv;
  const Tensor qkv = random_rounded({tokens, width}, seed, -1.f, 1.f);
  const Tensor a = random_rounded({tokens, s.nv}, seed + 1, -3.f, 3.f);
  const Tensor b = random_rounded({tokens, s.nv}, seed + 2, -3.f, 3.f);
  const Tensor a_log = random_rounded({s.nv}, seed + 3, -2.f, 1.f);
  const Tensor dt_bias = random_rounded({s.nv}, seed + 4, -1.f, 1.f);
  const Tensor state0 = random_rounded({s.nv, s.dk, s.dv}, seed + 5, -0.5f, 0.5f);
  Tensor ref = Tensor::host(DType::kF32, {tokens, s.nv, s.dv}), ref_state = host_copy(state0);
  ops::gated_delta_rule({.qkv = qkv, .a = a, .b = b, .A_log = a_log, .dt_bias = dt_bias,
                         .state = ref_state, .out = ref});
  Tensor state = gpu.from_host(state0);
  Tensor out = gpu.empty(DType::kBF16, {tokens, s.nv, s.dv});
  gpu.fill_bytes(out, 0xFF);
  auto bf16 = [&](const Tensor& t) { return gpu.from_host(to_bf16_host(t)); };
  ops::gated_delta_rule({.qkv = bf16(qkv), .a = bf16(a), .b = bf16(b), .A_log = gpu.from_host(a_log),
                         .dt_bias = gpu.from_host(dt_bias), .state = state, .out = out});
  const std::string what = "gdn T=" + std::to_string(tokens) + " nv=" + std::to_string(s.nv) +
                           " dk=" + std::to_string(s.dk);
  expect_close(gpu, out, ref, kBf16Tolerance, what + " out");
  expect_close(gpu, state, ref_state, 1e-3, what + " state");
}

TEST_F(CudaGdnChunked, Qwen3NextShapeMatchesCpu) {
  for (const int64_t tokens : {64, 65, 200, 1000, 4096}) {
    ASSERT_EQ(ops::gated_delta_rule_cuda_form(tokens, kQwen3Next.dk, kQwen3Next.dv, false),
              GatedDeltaRuleForm::kChunked);
    check_against_cpu(*gpu_, kQwen3Next, tokens, 500 + static_cast<uint64_t>(tokens));
  }
}

TEST_F(CudaGdnChunked, FixtureShapeMatchesCpu) {
  for (const int64_t tokens : {64, 65, 127, 200, 1000, 4096}) {
    ASSERT_EQ(ops::gated_delta_rule_cuda_form(tokens, kFixture.dk, kFixture.dv, false),
              GatedDeltaRuleForm::kChunked);
    check_against_cpu(*gpu_, kFixture, tokens, 600 + static_cast<uint64_t>(tokens));
  }
}

TEST_F(CudaGdnChunked, ShortRowsTakeTheRecurrentFormAndMatchCpu) {
  for (const int64_t tokens : {1, 17, 63}) {
    for (const GdnShape& s : {kQwen3Next, kFixture}) {
      ASSERT_EQ(ops::gated_delta_rule_cuda_form(tokens, s.dk, s.dv, false), GatedDeltaRuleForm::kRecurrent);
      check_against_cpu(*gpu_, s, tokens, 700 + static_cast<uint64_t>(tokens));
    }
  }
}

TEST_F(CudaGdnChunked, SplitSegmentsCarryTheStateLikeOneSegment) {
  // A prefill split into a chunked segment then a partial one ends where the whole one does.
  const GdnShape s = kFixture;
  const int64_t tokens = 300, split = 192, width = 2 * s.nk * s.dk + s.nv * s.dv;
  const Tensor qkv = random_rounded({tokens, width}, 800), a = random_rounded({tokens, s.nv}, 801, -3.f, 3.f);
  const Tensor b = random_rounded({tokens, s.nv}, 802, -3.f, 3.f), a_log = random_rounded({s.nv}, 803, -2.f, 1.f);
  const Tensor dt_bias = random_rounded({s.nv}, 804), state0 = random_rounded({s.nv, s.dk, s.dv}, 805, -0.5f, 0.5f);
  Tensor ref = Tensor::host(DType::kF32, {tokens, s.nv, s.dv}), ref_state = host_copy(state0);
  ops::gated_delta_rule({.qkv = qkv, .a = a, .b = b, .A_log = a_log, .dt_bias = dt_bias, .state = ref_state,
                         .out = ref});
  const Tensor gqkv = gpu_bf16(qkv), ga = gpu_bf16(a), gb = gpu_bf16(b);
  const Tensor ga_log = gpu_copy(a_log), gdt_bias = gpu_copy(dt_bias);
  Tensor state = gpu_copy(state0), out = poisoned(DType::kBF16, {tokens, s.nv, s.dv});
  for (const auto& [begin, end] : std::vector<std::pair<int64_t, int64_t>>{{0, split}, {split, tokens}}) {
    ops::gated_delta_rule({.qkv = gqkv.slice_rows(begin, end), .a = ga.slice_rows(begin, end),
                           .b = gb.slice_rows(begin, end), .A_log = ga_log, .dt_bias = gdt_bias, .state = state,
                           .out = out.slice_rows(begin, end)});
  }
  expect_close(*gpu_, out, ref, kBf16Tolerance, "split out");
  expect_close(*gpu_, state, ref_state, 1e-3, "split state");
}

}  // namespace
}  // namespace strata::test
