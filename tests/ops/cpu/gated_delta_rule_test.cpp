// Gated delta rule: recurrent and chunked forms against a naive double-precision reference
// (HF's torch_recurrent_gated_delta_rule written out loop by loop), against each other,
// split-equals-whole, per-token intermediate states, strided and unexpanded q/k inputs.
#include "strata/ops/cpu/gated_delta_rule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "strata/core/error.h"

namespace strata::cpu {
namespace {

std::vector<float> uniform(int64_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (float& x : out) x = dist(rng);
  return out;
}

struct Case {
  int64_t num_tokens, num_v_heads, num_k_heads, k_head_dim, v_head_dim;
};

// Inputs with q, k in key heads ([L, num_k_heads, dk]) and a random initial state.
struct Inputs {
  Case c;
  std::vector<float> q, k, v, g, beta, state;
  Inputs(Case cs, uint32_t seed, float g_lo = -1.f, float g_hi = -0.01f) : c(cs) {
    q = uniform(c.num_tokens * c.num_k_heads * c.k_head_dim, seed + 1, -1.f, 1.f);
    k = uniform(c.num_tokens * c.num_k_heads * c.k_head_dim, seed + 2, -1.f, 1.f);
    v = uniform(c.num_tokens * c.num_v_heads * c.v_head_dim, seed + 3, -1.f, 1.f);
    g = uniform(c.num_tokens * c.num_v_heads, seed + 4, g_lo, g_hi);
    beta = uniform(c.num_tokens * c.num_v_heads, seed + 5, 0.f, 1.f);
    state = uniform(c.num_v_heads * c.k_head_dim * c.v_head_dim, seed + 6, -0.5f, 0.5f);
  }
  // Params for tokens [t0, t0 + n) writing into out, state and optional intermediates.
  GatedDeltaRuleParams params(int64_t t0, int64_t n, float* st, float* out, float* inter) const {
    return {.q = q.data() + t0 * c.num_k_heads * c.k_head_dim,
            .k = k.data() + t0 * c.num_k_heads * c.k_head_dim,
            .v = v.data() + t0 * c.num_v_heads * c.v_head_dim,
            .g = g.data() + t0 * c.num_v_heads,
            .beta = beta.data() + t0 * c.num_v_heads,
            .state = st,
            .out = out,
            .intermediate_states = inter,
            .num_tokens = n,
            .num_v_heads = c.num_v_heads,
            .num_k_heads = c.num_k_heads,
            .k_head_dim = c.k_head_dim,
            .v_head_dim = c.v_head_dim};
  }
};

// HF's recurrent rule in double: l2norm, scale, decay, delta update, readout.
void reference(const Inputs& in, std::vector<double>& state, std::vector<double>& out) {
  const Case& c = in.c;
  const int64_t dk = c.k_head_dim, dv = c.v_head_dim, rep = c.num_v_heads / c.num_k_heads;
  out.assign(c.num_tokens * c.num_v_heads * dv, 0.0);
  for (int64_t t = 0; t < c.num_tokens; ++t) {
    for (int64_t h = 0; h < c.num_v_heads; ++h) {
      const float* qs = in.q.data() + (t * c.num_k_heads + h / rep) * dk;
      const float* ks = in.k.data() + (t * c.num_k_heads + h / rep) * dk;
      double qn = 0, kn = 0;
      for (int64_t i = 0; i < dk; ++i) qn += double(qs[i]) * qs[i], kn += double(ks[i]) * ks[i];
      std::vector<double> q(dk), k(dk), kv(dv, 0.0);
      for (int64_t i = 0; i < dk; ++i) {
        q[i] = qs[i] / std::sqrt(qn + 1e-6) / std::sqrt(double(dk));
        k[i] = ks[i] / std::sqrt(kn + 1e-6);
      }
      double* s = state.data() + h * dk * dv;
      const double decay = std::exp(double(in.g[t * c.num_v_heads + h]));
      for (int64_t i = 0; i < dk * dv; ++i) s[i] *= decay;
      for (int64_t i = 0; i < dk; ++i)
        for (int64_t j = 0; j < dv; ++j) kv[j] += s[i * dv + j] * k[i];
      const float* vs = in.v.data() + (t * c.num_v_heads + h) * dv;
      for (int64_t j = 0; j < dv; ++j) kv[j] = (vs[j] - kv[j]) * in.beta[t * c.num_v_heads + h];
      for (int64_t i = 0; i < dk; ++i)
        for (int64_t j = 0; j < dv; ++j) s[i * dv + j] += k[i] * kv[j];
      for (int64_t i = 0; i < dk; ++i)
        for (int64_t j = 0; j < dv; ++j) out[(t * c.num_v_heads + h) * dv + j] += s[i * dv + j] * q[i];
    }
  }
}

// max |a - b| / max(1, max |b|): f32 rounding relative to the magnitude of the values.
template <typename A, typename B>
double rel_diff(const std::vector<A>& a, const std::vector<B>& b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0, mag = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(double(a[i]) - double(b[i])));
    mag = std::max(mag, std::fabs(double(b[i])));
  }
  return diff / mag;
}

struct Result {
  std::vector<float> state, out;
};

Result run_rule(const Inputs& in, bool chunked, int64_t split = -1) {
  const Case& c = in.c;
  Result r{in.state, std::vector<float>(c.num_tokens * c.num_v_heads * c.v_head_dim, -7.f)};
  const int64_t cut = split < 0 ? c.num_tokens : split;
  const int64_t out_row = c.num_v_heads * c.v_head_dim;
  for (auto [t0, n] : {std::pair{int64_t{0}, cut}, std::pair{cut, c.num_tokens - cut}}) {
    if (n == 0) continue;
    const GatedDeltaRuleParams p =
        in.params(t0, n, r.state.data(), r.out.data() + t0 * out_row, nullptr);
    chunked ? gated_delta_rule_chunked(p) : gated_delta_rule_recurrent(p);
  }
  return r;
}

const std::vector<Case> kCases = {
    {1, 2, 2, 16, 8},   {63, 2, 1, 16, 8},  {64, 4, 2, 16, 16}, {65, 3, 3, 8, 16},
    {200, 2, 2, 32, 16}, {130, 1, 1, 128, 4}, {7, 8, 2, 8, 8},
};

TEST(GatedDeltaRule, BothFormsMatchNaiveReference) {
  uint32_t seed = 10;
  for (const Case& c : kCases) {
    const Inputs in(c, seed += 10);
    std::vector<double> ref_state(in.state.begin(), in.state.end()), ref_out;
    reference(in, ref_state, ref_out);
    for (bool chunked : {false, true}) {
      const Result r = run_rule(in, chunked);
      EXPECT_LT(rel_diff(r.out, ref_out), 1e-5) << "L=" << c.num_tokens << " chunked=" << chunked;
      EXPECT_LT(rel_diff(r.state, ref_state), 1e-5) << "L=" << c.num_tokens << " chunked=" << chunked;
    }
  }
}

TEST(GatedDeltaRule, ChunkedMatchesRecurrent) {
  uint32_t seed = 500;
  for (const Case& c : kCases) {
    const Inputs in(c, seed += 10);
    const Result rec = run_rule(in, false), chk = run_rule(in, true);
    EXPECT_LT(rel_diff(chk.out, rec.out), 1e-5) << "L=" << c.num_tokens;
    EXPECT_LT(rel_diff(chk.state, rec.state), 1e-5) << "L=" << c.num_tokens;
  }
}

TEST(GatedDeltaRule, ExtremeDecaysAgree) {
  // Strong decay underflows exp(cumulative g) inside a chunk; near-zero decay keeps the state.
  for (auto [lo, hi] : {std::pair{-40.f, -5.f}, std::pair{-1e-3f, 0.f}}) {
    const Inputs in({150, 2, 2, 16, 8}, 41, lo, hi);
    std::vector<double> ref_state(in.state.begin(), in.state.end()), ref_out;
    reference(in, ref_state, ref_out);
    for (bool chunked : {false, true}) {
      const Result r = run_rule(in, chunked);
      EXPECT_LT(rel_diff(r.out, ref_out), 1e-5) << "g in " << lo << ".." << hi;
      EXPECT_LT(rel_diff(r.state, ref_state), 1e-5) << "g in " << lo << ".." << hi;
    }
  }
}

TEST(GatedDeltaRule, SplitSegmentEqualsWholeRun) {
  const Inputs in({200, 2, 1, 16, 8}, 77);
  for (bool chunked : {false, true}) {
    const Result whole = run_rule(in, chunked);
    for (int64_t split : {1, 17, 63, 64, 65, 128, 199}) {
      const Result parts = run_rule(in, chunked, split);
      EXPECT_LT(rel_diff(parts.out, whole.out), 1e-5) << "split=" << split;
      EXPECT_LT(rel_diff(parts.state, whole.state), 1e-5) << "split=" << split;
    }
  }
  // The recurrent form does the same arithmetic either way: the split is bit-exact.
  const Result whole = run_rule(in, false), parts = run_rule(in, false, 91);
  EXPECT_EQ(parts.out, whole.out);
  EXPECT_EQ(parts.state, whole.state);
}

TEST(GatedDeltaRule, IntermediateStatesEqualShorterRuns) {
  const Case c{9, 4, 2, 8, 8};
  const Inputs in(c, 303);
  const int64_t state_elems = c.num_v_heads * c.k_head_dim * c.v_head_dim;
  std::vector<float> state = in.state, out(c.num_tokens * c.num_v_heads * c.v_head_dim);
  std::vector<float> inter(c.num_tokens * state_elems);
  gated_delta_rule_recurrent(in.params(0, c.num_tokens, state.data(), out.data(), inter.data()));
  for (int64_t i = 0; i < c.num_tokens; ++i) {
    std::vector<float> short_state = in.state, short_out(out.size());
    gated_delta_rule_recurrent(in.params(0, i + 1, short_state.data(), short_out.data(), nullptr));
    const std::vector<float> got(inter.begin() + i * state_elems, inter.begin() + (i + 1) * state_elems);
    EXPECT_EQ(got, short_state) << "token " << i;
  }
  const std::vector<float> last(inter.end() - state_elems, inter.end());
  EXPECT_EQ(last, state);
}

TEST(GatedDeltaRule, StridedRowsMatchPackedRows) {
  // q, k, v as column ranges of one [L, conv_dim] buffer, as the conv output hands them over.
  const Case c{70, 4, 2, 8, 8};
  const Inputs in(c, 900);
  const int64_t qk_w = c.num_k_heads * c.k_head_dim, v_w = c.num_v_heads * c.v_head_dim;
  const int64_t row = 2 * qk_w + v_w;
  std::vector<float> mixed(c.num_tokens * row);
  for (int64_t t = 0; t < c.num_tokens; ++t) {
    std::copy_n(in.q.data() + t * qk_w, qk_w, mixed.data() + t * row);
    std::copy_n(in.k.data() + t * qk_w, qk_w, mixed.data() + t * row + qk_w);
    std::copy_n(in.v.data() + t * v_w, v_w, mixed.data() + t * row + 2 * qk_w);
  }
  for (bool chunked : {false, true}) {
    const Result packed = run_rule(in, chunked);
    Result strided{in.state, std::vector<float>(packed.out.size())};
    GatedDeltaRuleParams p = in.params(0, c.num_tokens, strided.state.data(), strided.out.data(), nullptr);
    p.q = mixed.data(), p.k = mixed.data() + qk_w, p.v = mixed.data() + 2 * qk_w;
    p.q_row_stride = p.k_row_stride = p.v_row_stride = row;
    chunked ? gated_delta_rule_chunked(p) : gated_delta_rule_recurrent(p);
    EXPECT_EQ(strided.out, packed.out);
    EXPECT_EQ(strided.state, packed.state);
  }
}

TEST(GatedDeltaRule, RejectsBadShapes) {
  const Inputs in({4, 3, 2, 8, 8}, 1);
  std::vector<float> state = in.state, out(4 * 3 * 8);
  GatedDeltaRuleParams p = in.params(0, 4, state.data(), out.data(), nullptr);
  EXPECT_THROW(gated_delta_rule_recurrent(p), Error);  // 3 value heads over 2 key heads
  p.num_k_heads = 3;
  p.k_row_stride = 5;
  EXPECT_THROW(gated_delta_rule_recurrent(p), Error);
  p.k_row_stride = 0;
  std::vector<float> inter(4 * state.size());
  p.intermediate_states = inter.data();
  EXPECT_THROW(gated_delta_rule_chunked(p), Error);
}

}  // namespace
}  // namespace strata::cpu
