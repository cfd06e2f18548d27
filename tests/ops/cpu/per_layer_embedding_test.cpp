// PLE ops: n-gram ids exactly as transformers' Qwen4ExpTextNGramEmbedding gives them for the
// fixture's layer 0 (its multipliers overflow int64, so wrapping and Python's modulo matter;
// end-of-sequence tokens cut the n-grams), the same ids whether the carry is continued across
// calls or held by batched slots, the carry after each token; and the PLE gate.
#include "strata/ops/per_layer_embedding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "test_support.h"

namespace strata {
namespace {

// The fixture's layer 0 (tests/fixtures/hf/qwen4_exp): ngram_size 3, 2 heads per order, eos 2.
ops::NgramHash fixture_hash() {
  return {.ngram_size = 3, .heads_per_ngram = 2, .eos_token_id = 2,
          .multipliers = {4295158889763781, 17440218147737327, 1270917961434445},
          .vocab_sizes = {67, 71, 73, 79}, .offsets = {0, 67, 138, 211}};
}

const std::vector<int32_t> kTokens = {7, 300, 2, 45, 45, 511, 2, 2, 9};
// transformers' ids for kTokens from a fresh sequence (printed by the fixture's model).
const std::vector<int32_t> kExpected = {12, 92, 188, 234, 58, 106, 143, 257, 61, 115, 141, 231, 62, 81, 140, 248,
                                        63, 112, 139, 239, 17, 94, 201, 264, 5, 75, 153, 225, 27, 88, 138, 215,
                                        21, 118, 159, 271};

Tensor i32(const std::vector<int32_t>& values) {
  Tensor t = Tensor::host(DType::kI32, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), t.data_as<int32_t>());
  return t;
}

Tensor zeros(Shape shape) {
  Tensor t = Tensor::host(DType::kF32, shape);
  std::fill_n(t.data_as<float>(), t.numel(), 0.f);
  return t;
}

std::vector<int32_t> values(const Tensor& t) { return {t.data_as<int32_t>(), t.data_as<int32_t>() + t.numel()}; }

TEST(PerLayerEmbeddingOp, NgramIdsMatchTransformersWholeAndInPieces) {
  const ops::NgramHash hash = fixture_hash();
  const int64_t n = static_cast<int64_t>(kTokens.size()), heads = hash.num_heads();
  Tensor carry = zeros({hash.carry_elems()}), out = Tensor::host(DType::kI32, {n, heads});
  Tensor steps = zeros({n, hash.carry_elems()});
  ops::ngram_ids(hash, {.token_ids = i32(kTokens), .carry = carry, .out = out, .intermediate_states = steps});
  EXPECT_EQ(values(out), kExpected);
  // The carry after the last token equals the last intermediate.
  for (int64_t i = 0; i < hash.carry_elems(); ++i)
    EXPECT_EQ(carry.data_as<float>()[i], steps.data_as<float>()[(n - 1) * hash.carry_elems() + i]);
  Tensor piecewise = zeros({hash.carry_elems()});
  std::vector<int32_t> got;
  for (size_t begin = 0; begin < kTokens.size(); begin += 4) {
    const std::vector<int32_t> piece(kTokens.begin() + begin, kTokens.begin() + std::min(begin + 4, kTokens.size()));
    Tensor part = Tensor::host(DType::kI32, {static_cast<int64_t>(piece.size()), heads});
    ops::ngram_ids(hash, {.token_ids = i32(piece), .carry = piecewise, .out = part});
    const std::vector<int32_t> ids = values(part);
    got.insert(got.end(), ids.begin(), ids.end());
  }
  EXPECT_EQ(got, kExpected);
}

// Batched decode: token i continues slot slots[i]'s sequence; slot 1 holds kTokens[0..4) (from
// the intermediates of a whole run), slot 0 a fresh sequence.
TEST(PerLayerEmbeddingOp, NgramIdsOfBatchedSlots) {
  const ops::NgramHash hash = fixture_hash();
  const int64_t elems = hash.carry_elems(), heads = hash.num_heads();
  Tensor steps = zeros({4, elems}), unused = Tensor::host(DType::kI32, {4, heads});
  Tensor scratch = zeros({elems});
  ops::ngram_ids(hash, {.token_ids = i32({7, 300, 2, 45}), .carry = scratch, .out = unused,
                        .intermediate_states = steps});
  Tensor slots_state = zeros({2, elems});
  std::copy_n(steps.data_as<float>() + 3 * elems, elems, slots_state.data_as<float>() + elems);
  Tensor out = Tensor::host(DType::kI32, {2, heads});
  ops::ngram_ids(hash, {.token_ids = i32({45, 7}), .carry = slots_state, .out = out, .state_slots = i32({1, 0})});
  const std::vector<int32_t> ids = values(out);
  EXPECT_EQ(std::vector<int32_t>(ids.begin(), ids.begin() + heads),
            std::vector<int32_t>(kExpected.begin() + 4 * heads, kExpected.begin() + 5 * heads));
  EXPECT_EQ(std::vector<int32_t>(ids.begin() + heads, ids.end()),
            std::vector<int32_t>(kExpected.begin(), kExpected.begin() + heads));
}

TEST(PerLayerEmbeddingOp, GateIsSignedSqrtSigmoidOfTheStreamDot) {
  constexpr int64_t t = 3, streams = 2, hidden = 5;
  const Tensor key = test::random_f32({t, streams, hidden}, 81, -2.f, 2.f);
  const Tensor query = test::random_f32({t, streams, hidden}, 82, -2.f, 2.f);
  const Tensor value = test::random_f32({t, hidden}, 83);
  Tensor out = Tensor::host(DType::kF32, {t, streams, hidden});
  ops::ple_gate(key, query, value, out);
  for (int64_t r = 0; r < t; ++r)
    for (int64_t j = 0; j < streams; ++j) {
      double g = 0;
      for (int64_t i = 0; i < hidden; ++i)
        g += key.data_as<float>()[(r * streams + j) * hidden + i] * query.data_as<float>()[(r * streams + j) * hidden + i];
      g /= std::sqrt(static_cast<double>(hidden));
      const double gate = 1.0 / (1.0 + std::exp(-(g < 0 ? -1 : 1) * std::sqrt(std::max(std::fabs(g), 1e-6))));
      for (int64_t i = 0; i < hidden; ++i)
        EXPECT_NEAR(out.data_as<float>()[(r * streams + j) * hidden + i], gate * value.data_as<float>()[r * hidden + i],
                    1e-5);
    }
}

}  // namespace
}  // namespace strata
