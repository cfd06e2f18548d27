// prepare_qkv on the CPU against the math written out here: per-head RMSNorm, rotate-half
// rotary on the first rotary_dim dims, q to q_out and k, v to their cache slots.
#include <gtest/gtest.h>

#include <cmath>

#include "test_support.h"
#include "strata/ops/activation.h"
#include "strata/ops/prepare_qkv.h"

namespace strata::test {
namespace {

struct Dims {
  int64_t t = 3, nh = 4, nkv = 2, hd = 8, rotary = 8;
  bool norm = true;
};

// The expected head after norm and rotary, from its raw values.
std::vector<float> expected_head(const float* raw, const float* w, const Dims& d, float pos, const float* inv_freq,
                                 bool is_v) {
  std::vector<float> h(raw, raw + d.hd);
  if (is_v) return h;
  if (d.norm) {
    double ss = 0;
    for (float v : h) ss += static_cast<double>(v) * v;
    const float inv = 1.0f / std::sqrt(static_cast<float>(ss / d.hd) + 1e-6f);
    for (int64_t i = 0; i < d.hd; ++i) h[i] = h[i] * inv * w[i];
  }
  const int64_t half = d.rotary / 2;
  for (int64_t i = 0; i < half; ++i) {
    const float c = std::cos(pos * inv_freq[i]), s = std::sin(pos * inv_freq[i]);
    const float a = h[i], b = h[i + half];
    h[i] = a * c - b * s;
    h[i + half] = b * c + a * s;
  }
  return h;
}

void check_case(const Dims& d) {
  const int64_t width = (d.nh + 2 * d.nkv) * d.hd, block_size = 4, num_blocks = 3;
  const Tensor qkv = random_f32({d.t, width}, 31, -2.f, 2.f);
  const Tensor qw = random_f32({d.hd}, 32, 0.5f, 1.5f), kw = random_f32({d.hd}, 33, 0.5f, 1.5f);
  const Tensor inv_freq = random_f32({std::max<int64_t>(d.rotary / 2, 1)}, 34, 0.01f, 1.f);
  Tensor positions = Tensor::host(DType::kI32, {d.t}), slots = Tensor::host(DType::kI32, {d.t});
  const int32_t slot_of[] = {9, 2, 7};
  for (int64_t i = 0; i < d.t; ++i) {
    positions.data_as<int32_t>()[i] = static_cast<int32_t>(100 + 17 * i);
    slots.data_as<int32_t>()[i] = slot_of[i];
  }
  Tensor k_cache = random_f32({num_blocks, block_size, d.nkv, d.hd}, 35);
  Tensor v_cache = random_f32({num_blocks, block_size, d.nkv, d.hd}, 36);
  const Tensor k_before = random_f32(k_cache.shape(), 35);
  Tensor q_out = Tensor::host(DType::kF32, {d.t, d.nh, d.hd});
  ops::prepare_qkv({.qkv = qkv, .q_norm = d.norm ? qw : Tensor(), .k_norm = d.norm ? kw : Tensor(),
                    .positions = positions, .inv_freq = inv_freq, .slot_mapping = slots, .k_cache = k_cache,
                    .v_cache = v_cache, .q_out = q_out},
                   {.rotary_dim = d.rotary, .norm_eps = 1e-6f});
  for (int64_t i = 0; i < d.t; ++i) {
    const float* row = qkv.data_as<float>() + i * width;
    const float pos = static_cast<float>(positions.data_as<int32_t>()[i]);
    for (int64_t head = 0; head < d.nh + 2 * d.nkv; ++head) {
      const bool is_q = head < d.nh, is_v = head >= d.nh + d.nkv;
      const auto want = expected_head(row + head * d.hd, is_q ? qw.data_as<float>() : kw.data_as<float>(), d, pos,
                                      inv_freq.data_as<float>(), is_v);
      const float* got = is_q ? q_out.data_as<float>() + (i * d.nh + head) * d.hd
                              : (is_v ? v_cache : k_cache).data_as<float>() +
                                    (slot_of[i] * d.nkv + (is_v ? head - d.nh - d.nkv : head - d.nh)) * d.hd;
      for (int64_t e = 0; e < d.hd; ++e) ASSERT_NEAR(got[e], want[e], 1e-5f) << "token " << i << " head " << head;
    }
  }
  // Slots no token maps to are untouched.
  for (int64_t e = 0; e < d.nkv * d.hd; ++e)
    ASSERT_EQ(k_cache.data_as<float>()[5 * d.nkv * d.hd + e], k_before.data_as<float>()[5 * d.nkv * d.hd + e]);
}

TEST(PrepareQkv, NormRotaryAndCacheSlots) { check_case({}); }
TEST(PrepareQkv, PartialRotaryWithoutNorm) { check_case({.rotary = 4, .norm = false}); }
TEST(PrepareQkv, NoRotary) { check_case({.rotary = 0}); }

TEST(GatedActivationHalves, SiluOfGateTimesUp) {
  const Tensor gate_up = random_f32({3, 10}, 40, -3.f, 3.f);
  Tensor out = Tensor::host(DType::kF32, {3, 5});
  ops::gated_activation_halves(gate_up, out, ops::Activation::kSilu);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 5; ++c) {
      const float g = gate_up.data_as<float>()[r * 10 + c], u = gate_up.data_as<float>()[r * 10 + 5 + c];
      EXPECT_NEAR(out.data_as<float>()[r * 5 + c], g / (1.0f + std::exp(-g)) * u, 1e-6f);
    }
}

}  // namespace
}  // namespace strata::test
