// Each CPU op against a straightforward scalar reference on random inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "strata/ops/activation.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/embedding.h"
#include "strata/ops/linear.h"
#include "strata/ops/paged_attention.h"
#include "strata/ops/rms_norm.h"
#include "strata/ops/rope.h"
#include "test_support.h"

namespace strata {
namespace {

float as_f32(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kF32) return t.data_as<float>()[i];
  if (t.dtype() == DType::kBF16) return bf16_to_f32(t.data_as<uint16_t>()[i]);
  return f16_to_f32(t.data_as<uint16_t>()[i]);
}

Tensor random_of(DType dtype, Shape shape, uint32_t seed) {
  Tensor f = test::random_f32(shape, seed);
  if (dtype == DType::kF32) return f;
  Tensor t = Tensor::host(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data_as<uint16_t>()[i] = dtype == DType::kBF16 ? f32_to_bf16(f.data_as<float>()[i]) : f32_to_f16(f.data_as<float>()[i]);
  return t;
}

class LinearOp : public ::testing::TestWithParam<std::tuple<DType, int64_t>> {};

TEST_P(LinearOp, MatchesScalarReference) {
  const auto [dtype, tokens] = GetParam();
  const int64_t in = 96, out = 70;
  Tensor x = test::random_f32({tokens, in}, 1), w = random_of(dtype, {out, in}, 2);
  Tensor bias = test::random_f32({out}, 3), y = Tensor::host(DType::kF32, {tokens, out});
  ops::linear(x, w, bias, y);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t o = 0; o < out; ++o) {
      double ref = bias.data_as<float>()[o];
      for (int64_t i = 0; i < in; ++i) ref += x.data_as<float>()[t * in + i] * as_f32(w, o * in + i);
      ASSERT_NEAR(y.data_as<float>()[t * out + o], ref, 1e-4) << t << "," << o;
    }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, LinearOp,
                         ::testing::Combine(::testing::Values(DType::kF32, DType::kBF16, DType::kF16),
                                            ::testing::Values(1, 3, 17)));

TEST(RmsNormOp, PlainResidualAndUnitOffset) {
  Tensor x = test::random_f32({5, 64}, 4), w = random_of(DType::kBF16, {64}, 5);
  Tensor residual = test::random_f32({5, 64}, 6), residual_ref = test::random_f32({5, 64}, 6);
  Tensor out = Tensor::host(DType::kF32, {5, 64});
  for (bool unit : {false, true}) {
    ops::add_rms_norm(residual, x, w, out, {.eps = 1e-5f, .unit_offset = unit});
    for (int64_t r = 0; r < 5; ++r) {
      double ss = 0;
      for (int64_t i = 0; i < 64; ++i) {
        residual_ref.data_as<float>()[r * 64 + i] += x.data_as<float>()[r * 64 + i];
        ss += std::pow(residual_ref.data_as<float>()[r * 64 + i], 2);
      }
      const double inv = 1.0 / std::sqrt(ss / 64 + 1e-5);
      for (int64_t i = 0; i < 64; ++i) {
        ASSERT_FLOAT_EQ(residual.data_as<float>()[r * 64 + i], residual_ref.data_as<float>()[r * 64 + i]);
        const double ref = residual_ref.data_as<float>()[r * 64 + i] * inv * (as_f32(w, i) + (unit ? 1 : 0));
        ASSERT_NEAR(out.data_as<float>()[r * 64 + i], ref, 1e-5);
      }
    }
  }
}

TEST(RopeOp, RotateHalfOnThePartialRotaryDims) {
  RopeConfig config{.rope_theta = 10000.0, .partial_rotary_factor = 0.5};
  const ops::RopeTable table = ops::rope_frequencies(config, 32, 4096);
  ASSERT_EQ(table.rotary_dim, 16);
  Tensor q = test::random_f32({3, 4, 32}, 7), k = test::random_f32({3, 2, 32}, 8);
  const Tensor q0 = test::random_f32({3, 4, 32}, 7);
  std::vector<int32_t> pos = {0, 5, 1000};
  Tensor positions = Tensor::view(pos.data(), DType::kI32, {3});
  Tensor inv = Tensor::view(const_cast<float*>(table.inv_freq.data()), DType::kF32, {8});
  ops::rope(q, k, positions, inv, {.rotary_dim = 16, .attention_scaling = 1.0f});
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t i = 0; i < 32; ++i) {
        const float* src = q0.data_as<float>() + (t * 4 + h) * 32;
        double ref = src[i];
        if (i < 16) {
          const double angle = static_cast<float>(pos[t]) * table.inv_freq[i % 8];
          ref = i < 8 ? src[i] * std::cos(angle) - src[i + 8] * std::sin(angle)
                      : src[i] * std::cos(angle) + src[i - 8] * std::sin(angle);
        }
        ASSERT_NEAR(q.data_as<float>()[(t * 4 + h) * 32 + i], ref, 2e-4) << t << "," << h << "," << i;
      }
}

TEST(ActivationOp, SiluGeluRelu2Tanh) {
  Tensor g = test::random_f32({4, 33}, 9, -4, 4), u = test::random_f32({4, 33}, 10);
  Tensor out = Tensor::host(DType::kF32, {4, 33});
  ops::gated_activation(g, u, out, ops::Activation::kSilu);
  for (int64_t i = 0; i < g.numel(); ++i) {
    const double x = g.data_as<float>()[i];
    ASSERT_NEAR(out.data_as<float>()[i], x / (1 + std::exp(-x)) * u.data_as<float>()[i], 1e-5);
  }
  ops::activation(g, out, ops::Activation::kRelu2);
  for (int64_t i = 0; i < g.numel(); ++i)
    ASSERT_FLOAT_EQ(out.data_as<float>()[i], std::pow(std::max(0.f, g.data_as<float>()[i]), 2));
  ops::activation(g, out, ops::Activation::kGelu);
  for (int64_t i = 0; i < g.numel(); ++i) {
    const double x = g.data_as<float>()[i];
    ASSERT_NEAR(out.data_as<float>()[i], 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))), 1e-5);
  }
  ops::activation(g, out, ops::Activation::kTanh);  // BERT's classifier pooler
  for (int64_t i = 0; i < g.numel(); ++i) ASSERT_NEAR(out.data_as<float>()[i], std::tanh(g.data_as<float>()[i]), 1e-6);
  EXPECT_EQ(ops::parse_activation("tanh"), ops::Activation::kTanh);
}

// gpt-oss: gate clamped above at 7, up clamped to [-7, 7] then + 1, gate * sigmoid(1.702 gate).
TEST(ActivationOp, ClampedSwigluClampsGateAboveAndUpBothWays) {
  std::vector<float> gate = {-9.f, -1.f, 0.5f, 6.9f, 7.5f, 12.f}, up = {-12.f, -7.5f, 0.25f, 3.f, 8.f, 30.f};
  std::vector<float> out(6), halves_out(6), gate_up;
  for (int i = 0; i < 3; ++i) gate_up.push_back(gate[i]);
  for (int i = 0; i < 3; ++i) gate_up.push_back(up[i]);
  for (int i = 3; i < 6; ++i) gate_up.push_back(gate[i]);
  for (int i = 3; i < 6; ++i) gate_up.push_back(up[i]);
  ops::gated_activation(Tensor::view(gate.data(), DType::kF32, {2, 3}), Tensor::view(up.data(), DType::kF32, {2, 3}),
                        Tensor::view(out.data(), DType::kF32, {2, 3}), ops::Activation::kClampedSwiglu);
  ops::gated_activation_halves(Tensor::view(gate_up.data(), DType::kF32, {2, 6}),
                               Tensor::view(halves_out.data(), DType::kF32, {2, 3}), ops::Activation::kClampedSwiglu);
  for (int i = 0; i < 6; ++i) {
    const double g = std::min<double>(gate[i], 7.0), u = std::clamp<double>(up[i], -7.0, 7.0);
    const double expected = g / (1 + std::exp(-1.702 * g)) * (u + 1);
    EXPECT_NEAR(out[i], expected, 1e-5 * std::max(1.0, std::abs(expected))) << i;
    EXPECT_EQ(halves_out[i], out[i]) << i;
  }
}

// DeepSeek-V4's swiglu_limit: the gate clamped above only (lo = -inf), up both ways.
TEST(ElementwiseOp, ClampBoundsEachValue) {
  std::vector<float> x = {-12.f, -0.3f, 0.f, 0.29f, 0.31f, 9.f};
  ops::clamp(Tensor::view(x.data(), DType::kF32, {2, 3}), -0.3f, 0.3f);
  EXPECT_EQ(x, (std::vector<float>{-0.3f, -0.3f, 0.f, 0.29f, 0.3f, 0.3f}));
  std::vector<float> gate = {-12.f, 0.5f};
  ops::clamp(Tensor::view(gate.data(), DType::kF32, {1, 2}), -INFINITY, 0.3f);
  EXPECT_EQ(gate, (std::vector<float>{-12.f, 0.3f}));
}

// gpt-oss's YaRN (factor 32, beta 32 / 1, 4096 original positions, truncate false): the
// inverse frequencies and attention factor transformers computes for head_dim 64.
TEST(RopeOp, YarnWithoutTruncationMatchesTransformers) {
  RopeConfig config{.rope_type = "yarn", .rope_theta = 150000.0, .factor = 32.0,
                    .original_max_position_embeddings = 4096, .beta_fast = 32.0, .beta_slow = 1.0, .truncate = false};
  const ops::RopeTable table = ops::rope_frequencies(config, 64, 131072);
  const std::vector<float> expected = {
      1.f, 0.689044297f, 0.47478205f, 0.327145875f, 0.225418001f, 0.155322984f, 0.107024424f, 0.0737445652f,
      0.0508132726f, 0.0317056961f, 0.0193349998f, 0.0115920492f, 0.00679495931f, 0.00386035908f, 0.00209379266f,
      0.00105260219f, 0.000456483918f, 0.000129318694f, 3.83088118e-05f, 2.63964685e-05f, 1.8188337e-05f,
      1.25325696e-05f, 8.63549576e-06f, 5.95023948e-06f, 4.09997847e-06f, 2.82506676e-06f, 1.94659629e-06f,
      1.34129095e-06f, 9.24208962e-07f, 6.36820914e-07f, 4.38797855e-07f, 3.0235114e-07f};
  ASSERT_EQ(table.inv_freq.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(table.inv_freq[i], expected[i], 2e-6 * expected[i]) << i;
  EXPECT_NEAR(table.attention_scaling, 1.34657359f, 1e-6);
  config.truncate = true;  // the rounded correction range moves the ramp
  EXPECT_GT(std::abs(ops::rope_frequencies(config, 64, 131072).inv_freq[17] - expected[17]), 1e-6f);
}

TEST(JoinHalvesOp, ConcatenatesRowsAndSplitHalvesUndoesIt) {
  const Tensor first = test::random_f32({5, 6}, 31), second = test::random_f32({5, 6}, 32);
  Tensor packed = Tensor::host(DType::kF32, {5, 12});
  ops::join_halves(first, second, packed);
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 6; ++c) {
      EXPECT_EQ(packed.data_as<float>()[r * 12 + c], first.data_as<float>()[r * 6 + c]);
      EXPECT_EQ(packed.data_as<float>()[r * 12 + 6 + c], second.data_as<float>()[r * 6 + c]);
    }
  Tensor a = Tensor::host(DType::kF32, {5, 1, 6}), b = Tensor::host(DType::kF32, {5, 1, 6});
  ops::split_halves(packed.reshape({5, 1, 12}), a, b);
  for (int64_t i = 0; i < 30; ++i) EXPECT_EQ(b.data_as<float>()[i], second.data_as<float>()[i]);
}

TEST(EmbeddingOp, WidensTheRows) {
  Tensor table = random_of(DType::kBF16, {10, 8}, 11), out = Tensor::host(DType::kF32, {3, 8});
  std::vector<int32_t> ids = {7, 0, 7};
  ops::embedding(table, Tensor::view(ids.data(), DType::kI32, {3}), out);
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t i = 0; i < 8; ++i) ASSERT_EQ(out.data_as<float>()[t * 8 + i], as_f32(table, ids[t] * 8 + i));
}

// Two rows (a 3-token chunk after 5 cached tokens, and a decode row after 9), GQA 4:2,
// blocks of 4 in a shuffled order, against dense attention over the same keys.
void check_attention(int64_t sliding_window, bool sinks) {
  const int64_t heads = 4, kv_heads = 2, dim = 16, block = 4;
  const std::vector<int32_t> q_lens = {3, 1}, kv_lens = {8, 10};
  const std::vector<std::vector<int32_t>> tables = {{5, 2}, {0, 3, 1}};
  Tensor k_cache = test::random_f32({6, block, kv_heads, dim}, 12), v_cache = test::random_f32({6, block, kv_heads, dim}, 13);
  Tensor q = test::random_f32({4, heads, dim}, 14), out = Tensor::host(DType::kF32, {4, heads, dim});
  Tensor sink_logits = test::random_f32({heads}, 15);
  std::vector<int32_t> cu = {0, 3, 4}, lens = kv_lens, bt = {5, 2, 0, 0, 3, 1};
  const ops::AttentionMetadata meta{.cu_seqlens = Tensor::view(cu.data(), DType::kI32, {3}),
                                    .kv_lens = Tensor::view(lens.data(), DType::kI32, {2}),
                                    .block_tables = Tensor::view(bt.data(), DType::kI32, {2, 3}),
                                    .num_rows = 2, .max_q_len = 3, .max_kv_len = 10};
  ops::paged_attention(q, k_cache, v_cache, meta,
                       {.scale = 0.25f, .sliding_window = sliding_window, .sinks = sinks ? sink_logits : Tensor()},
                       out);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t i = 0; i < q_lens[r]; ++i)
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t t = cu[r] + i, pos = kv_lens[r] - q_lens[r] + i;
        const int64_t first = sliding_window > 0 ? std::max<int64_t>(0, pos - sliding_window + 1) : 0;
        std::vector<double> p;
        double denom = sinks ? std::exp(sink_logits.data_as<float>()[h]) : 0, m = 0;
        for (int64_t j = first; j <= pos; ++j) {
          const int64_t slot = tables[r][j / block] * block + j % block;
          double s = 0;
          for (int64_t d = 0; d < dim; ++d)
            s += q.data_as<float>()[(t * heads + h) * dim + d] * k_cache.data_as<float>()[(slot * kv_heads + h / 2) * dim + d];
          p.push_back(std::exp(s * 0.25));
          denom += p.back();
        }
        for (int64_t d = 0; d < dim; ++d) {
          double acc = 0;
          for (int64_t j = first; j <= pos; ++j) {
            const int64_t slot = tables[r][j / block] * block + j % block;
            acc += p[j - first] * v_cache.data_as<float>()[(slot * kv_heads + h / 2) * dim + d];
          }
          m = acc / denom;
          ASSERT_NEAR(out.data_as<float>()[(t * heads + h) * dim + d], m, 1e-5);
        }
      }
}

TEST(PagedAttentionOp, CausalGqaVarlen) { check_attention(0, false); }
TEST(PagedAttentionOp, SlidingWindowAndSinks) { check_attention(3, true); }

}  // namespace
}  // namespace strata
