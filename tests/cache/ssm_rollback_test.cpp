// Verify-row rollback end to end: a GDN layer's recurrent and conv kernels write per-token
// states into a VerifyStateBuffer; rolling the pool slot back to k accepted tokens must equal
// running only those k tokens. Also measures f16 h_state storage error (docs/ssm_state_f16.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "strata/cache/ssm_state_pool.h"
#include "strata/ops/cpu/causal_conv1d.h"
#include "strata/ops/cpu/gated_delta_rule.h"

namespace strata {
namespace {

std::vector<float> uniform(int64_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (float& x : out) x = dist(rng);
  return out;
}

constexpr int64_t kHeads = 2, kDk = 8, kDv = 8, kChannels = 3 * kHeads * kDk, kKernel = 4;

// One token row of a toy GDN layer: conv over [q | k | v] channels, then the recurrence.
struct ToyLayer {
  std::vector<float> conv_weight = uniform(kChannels * kKernel, 1, -1.f, 1.f);
  void run(SsmStatePool& pool, int32_t slot, const std::vector<float>& x,
           const std::vector<float>& g, const std::vector<float>& beta, int64_t n,
           VerifyStateBuffer* buffer) const {
    std::vector<float> mixed(n * kChannels), out(n * kHeads * kDv);
    cpu::causal_conv1d({.x = x.data(), .weight = conv_weight.data(),
                        .conv_state = pool.conv_state(0, slot), .out = mixed.data(),
                        .intermediate_conv_states = buffer ? buffer->conv_states(0) : nullptr,
                        .num_tokens = n, .channels = kChannels, .kernel_size = kKernel});
    std::vector<float> state(kHeads * kDk * kDv);
    pool.load_h_state(0, slot, state.data());
    cpu::gated_delta_rule_recurrent(
        {.q = mixed.data(), .k = mixed.data() + kHeads * kDk, .v = mixed.data() + 2 * kHeads * kDk,
         .g = g.data(), .beta = beta.data(), .state = state.data(), .out = out.data(),
         .intermediate_states = buffer ? buffer->h_states(0) : nullptr, .num_tokens = n,
         .num_v_heads = kHeads, .k_head_dim = kDk, .v_head_dim = kDv, .q_row_stride = kChannels,
         .k_row_stride = kChannels, .v_row_stride = kChannels});
    pool.store_h_state(0, slot, state.data());
    if (buffer != nullptr) buffer->set_num_tokens(static_cast<int>(n));
  }
};

TEST(SsmRollback, RollbackEqualsRunningAcceptedPrefix) {
  const std::vector<SsmLayerShape> layers = {{kHeads * kDk * kDv, kChannels * (kKernel - 1)}};
  const ToyLayer layer;
  const int64_t prefix = 6, row = 5;
  const std::vector<float> x = uniform((prefix + row) * kChannels, 2, -1.f, 1.f);
  const std::vector<float> g = uniform((prefix + row) * kHeads, 3, -1.f, -0.01f);
  const std::vector<float> beta = uniform((prefix + row) * kHeads, 4, 0.f, 1.f);
  auto tail = [](const std::vector<float>& v, int64_t offset) {
    return std::vector<float>(v.begin() + offset, v.end());
  };
  for (SsmStateDType dtype : {SsmStateDType::kF32, SsmStateDType::kF16}) {
    SsmStatePool pool(layers, 3, dtype);
    VerifyStateBuffer buffer(layers, 8);
    const int32_t seq = *pool.allocate(), snapshot = *pool.allocate(), check = *pool.allocate();
    layer.run(pool, seq, x, g, beta, prefix, nullptr);
    pool.copy_slot(seq, snapshot);
    for (int accepted = 1; accepted <= row; ++accepted) {
      pool.copy_slot(snapshot, seq);
      layer.run(pool, seq, tail(x, prefix * kChannels), tail(g, prefix * kHeads),
                tail(beta, prefix * kHeads), row, &buffer);
      pool.rollback(seq, buffer, accepted);
      pool.copy_slot(snapshot, check);
      layer.run(pool, check, tail(x, prefix * kChannels), tail(g, prefix * kHeads),
                tail(beta, prefix * kHeads), accepted, nullptr);
      std::vector<float> a(layers[0].h_state_elems), b(a.size());
      pool.load_h_state(0, seq, a.data());
      pool.load_h_state(0, check, b.data());
      EXPECT_EQ(a, b) << "accepted " << accepted;
      const float* ca = pool.conv_state(0, seq);
      const float* cb = pool.conv_state(0, check);
      EXPECT_EQ(std::vector<float>(ca, ca + layers[0].conv_state_elems),
                std::vector<float>(cb, cb + layers[0].conv_state_elems));
    }
  }
}

// Decode worst case: the GDN state goes through f16 storage after every token.
struct F16Drift {
  double state_rel, out_rel;
};

F16Drift measure_f16_drift(float g_lo, float g_hi, int64_t tokens) {
  const int64_t heads = 4, dk = 128, dv = 128;
  const std::vector<float> q = uniform(tokens * heads * dk, 11, -1.f, 1.f);
  const std::vector<float> k = uniform(tokens * heads * dk, 12, -1.f, 1.f);
  const std::vector<float> v = uniform(tokens * heads * dv, 13, -1.f, 1.f);
  const std::vector<float> g = uniform(tokens * heads, 14, g_lo, g_hi);
  const std::vector<float> beta = uniform(tokens * heads, 15, 0.f, 1.f);
  SsmStatePool pool({{heads * dk * dv, 0}}, 1, SsmStateDType::kF16);
  const int32_t slot = *pool.allocate();
  std::vector<float> ref(heads * dk * dv, 0.f), st(ref.size()), out_ref(heads * dv), out(heads * dv);
  double out_diff = 0, out_mag = 0;
  for (int64_t t = 0; t < tokens; ++t) {
    auto params = [&](float* state, float* o) {
      return cpu::GatedDeltaRuleParams{
          .q = q.data() + t * heads * dk, .k = k.data() + t * heads * dk,
          .v = v.data() + t * heads * dv, .g = g.data() + t * heads, .beta = beta.data() + t * heads,
          .state = state, .out = o, .num_tokens = 1, .num_v_heads = heads, .k_head_dim = dk,
          .v_head_dim = dv};
    };
    cpu::gated_delta_rule_recurrent(params(ref.data(), out_ref.data()));
    pool.load_h_state(0, slot, st.data());
    cpu::gated_delta_rule_recurrent(params(st.data(), out.data()));
    pool.store_h_state(0, slot, st.data());
    for (int64_t i = 0; i < heads * dv; ++i) {
      out_diff = std::max(out_diff, std::fabs(double(out[i]) - out_ref[i]));
      out_mag = std::max(out_mag, std::fabs(double(out_ref[i])));
    }
  }
  pool.load_h_state(0, slot, st.data());
  double state_diff = 0, state_mag = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    state_diff = std::max(state_diff, std::fabs(double(st[i]) - ref[i]));
    state_mag = std::max(state_mag, std::fabs(double(ref[i])));
  }
  return {state_diff / state_mag, out_diff / out_mag};
}

TEST(SsmRollback, F16StateStorageDriftIsBounded) {
  // Relative to the largest magnitude; see docs/ssm_state_f16.md for the measured numbers.
  for (auto [lo, hi] : {std::pair{-0.05f, 0.f}, std::pair{-1.f, -0.01f}, std::pair{-4.f, 0.f}}) {
    const F16Drift d = measure_f16_drift(lo, hi, 256);
    std::printf("f16 h_state, g in [%g, %g], 256 tokens: state %.3g, output %.3g\n", lo, hi,
                d.state_rel, d.out_rel);
    EXPECT_LT(d.state_rel, 5e-3);
    EXPECT_LT(d.out_rel, 5e-3);
  }
}

}  // namespace
}  // namespace strata
