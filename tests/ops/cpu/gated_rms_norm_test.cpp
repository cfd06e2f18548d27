// Gated RMS norms against naive double references of Qwen3NextRMSNormGated (norm, weight, then
// gate) and MambaRMSNormGated / Zamba2RMSNormGated (gate, then grouped norm, weight); silu and
// sigmoid gates (Qwen4-Exp output_gate_type).
#include "strata/ops/cpu/gated_rms_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "strata/core/error.h"

namespace strata::cpu {
namespace {

std::vector<float> uniform(int64_t n, uint32_t seed, float lo = -2.f, float hi = 2.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (float& x : out) x = dist(rng);
  return out;
}

double gate_value(GateActivation gate, double v) {
  return gate == GateActivation::kSigmoid ? 1.0 / (1.0 + std::exp(-v)) : v / (1.0 + std::exp(-v));
}

struct Case {
  int64_t rows, hidden, group;  // group: resolved (> 0)
  float eps;
  GateOrder order;
  GateActivation gate;
};

std::vector<double> reference(const std::vector<float>& x, const std::vector<float>& z,
                              const std::vector<float>& w, const Case& c) {
  const int64_t hidden = c.hidden, group = c.group;
  std::vector<double> out(c.rows * hidden);
  for (int64_t r = 0; r < c.rows; ++r) {
    std::vector<double> h(hidden);
    for (int64_t i = 0; i < hidden; ++i) {
      h[i] = x[r * hidden + i];
      if (c.order == GateOrder::kGateThenNorm) h[i] *= gate_value(c.gate, z[r * hidden + i]);
    }
    for (int64_t g0 = 0; g0 < hidden; g0 += group) {
      double ms = 0;
      for (int64_t i = g0; i < g0 + group; ++i) ms += h[i] * h[i];
      const double inv = 1.0 / std::sqrt(ms / group + c.eps);
      for (int64_t i = g0; i < g0 + group; ++i) {
        double v = w[i] * (h[i] * inv);
        if (c.order == GateOrder::kNormThenGate) v *= gate_value(c.gate, z[r * hidden + i]);
        out[r * hidden + i] = v;
      }
    }
  }
  return out;
}

double max_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

TEST(GatedRmsNorm, MatchesNaiveReferenceBothOrdersAndGates) {
  struct Shape { int64_t rows, hidden, group; };
  for (const Shape s : {Shape{5, 128, 128}, Shape{3, 256, 64}, Shape{1, 24, 0}, Shape{40, 96, 32}}) {
    const std::vector<float> x = uniform(s.rows * s.hidden, 1), z = uniform(s.rows * s.hidden, 2);
    const std::vector<float> w = uniform(s.hidden, 3, 0.5f, 1.5f);
    for (GateOrder order : {GateOrder::kNormThenGate, GateOrder::kGateThenNorm})
      for (GateActivation gate : {GateActivation::kSilu, GateActivation::kSigmoid}) {
        std::vector<float> out(x.size());
        gated_rms_norm({.x = x.data(), .z = z.data(), .weight = w.data(), .out = out.data(),
                        .num_rows = s.rows, .hidden_size = s.hidden, .group_size = s.group,
                        .eps = 1e-6f, .order = order, .gate = gate});
        const int64_t group = s.group > 0 ? s.group : s.hidden;
        const std::vector<double> ref = reference(x, z, w, {s.rows, s.hidden, group, 1e-6f, order, gate});
        EXPECT_LT(max_diff(out, ref), 2e-6) << "hidden " << s.hidden << " group " << s.group;
      }
  }
}

TEST(GatedRmsNorm, GroupsAreNormalisedIndependently) {
  // Scaling one group of x by 100 leaves the other group's output unchanged (gate after norm).
  const int64_t hidden = 16, group = 8;
  std::vector<float> x = uniform(hidden, 4), z = uniform(hidden, 5), w(hidden, 1.f);
  std::vector<float> a(hidden), b(hidden);
  GatedRmsNormParams p{.x = x.data(), .z = z.data(), .weight = w.data(), .out = a.data(),
                       .num_rows = 1, .hidden_size = hidden, .group_size = group,
                       .order = GateOrder::kGateThenNorm};
  gated_rms_norm(p);
  for (int64_t i = 0; i < group; ++i) x[i] *= 100.f;
  p.out = b.data();
  gated_rms_norm(p);
  for (int64_t i = group; i < hidden; ++i) EXPECT_EQ(a[i], b[i]);
}

TEST(GatedRmsNorm, InPlaceEqualsOutOfPlace) {
  const std::vector<float> x = uniform(4 * 64, 6), z = uniform(4 * 64, 7), w = uniform(64, 8);
  for (GateOrder order : {GateOrder::kNormThenGate, GateOrder::kGateThenNorm}) {
    std::vector<float> out(x.size()), inplace = x;
    GatedRmsNormParams p{.x = x.data(), .z = z.data(), .weight = w.data(), .out = out.data(),
                         .num_rows = 4, .hidden_size = 64, .group_size = 16, .order = order};
    gated_rms_norm(p);
    p.x = p.out = inplace.data();
    gated_rms_norm(p);
    EXPECT_EQ(inplace, out);
  }
}

TEST(GatedRmsNorm, RejectsGroupThatDoesNotDivide) {
  std::vector<float> v(10);
  EXPECT_THROW(gated_rms_norm({.x = v.data(), .z = v.data(), .weight = v.data(), .out = v.data(),
                               .num_rows = 1, .hidden_size = 10, .group_size = 4}),
               Error);
}

}  // namespace
}  // namespace strata::cpu
