// Causal depthwise conv1d: against a naive reference over [history, x], HF's decode update
// (torch_causal_conv1d_update with its K-column state) and prefill cache init, split-equals-
// whole, per-token states, in-place and strided inputs.
#include "strata/ops/cpu/causal_conv1d.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "strata/core/error.h"

namespace strata::cpu {
namespace {

std::vector<float> uniform(int64_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (float& x : out) x = dist(rng);
  return out;
}

float silu(float x) { return x / (1.f + std::exp(-x)); }

struct Conv {
  int64_t channels, kernel_size;
  std::vector<float> weight, bias;
  Conv(int64_t ch, int64_t k, uint32_t seed)
      : channels(ch), kernel_size(k), weight(uniform(ch * k, seed)), bias(uniform(ch, seed + 1)) {}
  CausalConv1dParams params(const float* x, int64_t n, float* state, float* out) const {
    return {.x = x, .weight = weight.data(), .bias = bias.data(), .conv_state = state,
            .out = out, .num_tokens = n, .channels = channels, .kernel_size = kernel_size};
  }
};

// out[t][c] over the sequence [state columns..., x rows...] in double.
std::vector<float> reference(const Conv& cv, const std::vector<float>& state,
                             const std::vector<float>& x, int64_t n, bool use_silu,
                             std::vector<float>* new_state) {
  const int64_t ch = cv.channels, k = cv.kernel_size, hist = k - 1;
  std::vector<float> out(n * ch);
  for (int64_t c = 0; c < ch; ++c) {
    std::vector<float> seq;
    for (int64_t j = 0; j < hist; ++j) seq.push_back(state[c * hist + j]);
    for (int64_t t = 0; t < n; ++t) seq.push_back(x[t * ch + c]);
    for (int64_t t = 0; t < n; ++t) {
      double acc = cv.bias[c];
      for (int64_t j = 0; j < k; ++j) acc += double(cv.weight[c * k + j]) * seq[t + j];
      out[t * ch + c] = use_silu ? silu(float(acc)) : float(acc);
    }
    for (int64_t j = 0; j < hist; ++j) (*new_state)[c * hist + j] = seq[n + j];
  }
  return out;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
  return m;
}

TEST(CausalConv1d, MatchesNaiveReference) {
  for (auto [ch, k, n] : {std::tuple{5, 4, 1}, {130, 4, 7}, {64, 2, 3}, {70, 1, 5}, {9, 4, 2}}) {
    const Conv cv(ch, k, 3);
    for (bool use_silu : {true, false}) {
      const std::vector<float> x = uniform(n * ch, 7);
      std::vector<float> state = uniform(ch * (k - 1), 8), ref_state(state.size());
      const std::vector<float> ref = reference(cv, state, x, n, use_silu, &ref_state);
      std::vector<float> out(n * ch);
      CausalConv1dParams p = cv.params(x.data(), n, state.data(), out.data());
      p.silu = use_silu;
      causal_conv1d(p);
      EXPECT_LT(max_diff(out, ref), 1e-5) << "channels " << ch << " K " << k << " L " << n;
      EXPECT_EQ(state, ref_state);
    }
  }
}

TEST(CausalConv1d, DecodeEqualsHfUpdate) {
  // HF: state [C, K]; cat(state, x) -> state = last K columns; out = silu(conv(...)[-1]).
  const int64_t ch = 12, k = 4, steps = 6;
  const Conv cv(ch, k, 11);
  std::vector<float> hf_state = uniform(ch * k, 12), ours(ch * (k - 1));
  for (int64_t c = 0; c < ch; ++c)
    for (int64_t j = 0; j < k - 1; ++j) ours[c * (k - 1) + j] = hf_state[c * k + j + 1];
  for (int64_t s = 0; s < steps; ++s) {
    const std::vector<float> x = uniform(ch, 100 + s);
    std::vector<float> hf_out(ch), out(ch);
    for (int64_t c = 0; c < ch; ++c) {
      std::vector<float> window(hf_state.begin() + c * k + 1, hf_state.begin() + (c + 1) * k);
      window.push_back(x[c]);  // the K+1-column conv's last output sees these K inputs
      float acc = 0;
      for (int64_t j = 0; j < k; ++j) acc += window[j] * cv.weight[c * k + j];
      hf_out[c] = silu(acc + cv.bias[c]);
      std::copy(window.begin(), window.end(), hf_state.begin() + c * k);
    }
    causal_conv1d(cv.params(x.data(), 1, ours.data(), out.data()));
    EXPECT_LT(max_diff(out, hf_out), 1e-6) << "step " << s;
    for (int64_t c = 0; c < ch; ++c)
      for (int64_t j = 0; j < k - 1; ++j)
        EXPECT_EQ(ours[c * (k - 1) + j], hf_state[c * k + j + 1]) << "step " << s;
  }
}

TEST(CausalConv1d, FreshPrefillStateMatchesHfCacheInit) {
  // HF caches F.pad(x, (K - L, 0)): the last K inputs, zero-padded on the left when L < K.
  const int64_t ch = 6, k = 4;
  const Conv cv(ch, k, 21);
  for (int64_t n : {1, 2, 3, 4, 9}) {
    const std::vector<float> x = uniform(n * ch, 22);
    std::vector<float> state(ch * (k - 1), 0.f), out(n * ch);
    causal_conv1d(cv.params(x.data(), n, state.data(), out.data()));
    for (int64_t c = 0; c < ch; ++c) {
      for (int64_t j = 0; j < k - 1; ++j) {
        const int64_t t = n - (k - 1) + j;  // HF column j + 1 holds input t (or padding)
        EXPECT_EQ(state[c * (k - 1) + j], t >= 0 ? x[t * ch + c] : 0.f) << "L " << n;
      }
    }
  }
}

TEST(CausalConv1d, SplitAndIntermediatesEqualWholeRun) {
  const int64_t ch = 100, k = 4, n = 11;
  const Conv cv(ch, k, 31);
  const std::vector<float> x = uniform(n * ch, 32), init = uniform(ch * (k - 1), 33);
  std::vector<float> whole_state = init, whole_out(n * ch), inter(n * ch * (k - 1));
  CausalConv1dParams p = cv.params(x.data(), n, whole_state.data(), whole_out.data());
  p.intermediate_conv_states = inter.data();
  causal_conv1d(p);
  for (int64_t split = 1; split < n; ++split) {
    std::vector<float> state = init, out(n * ch);
    causal_conv1d(cv.params(x.data(), split, state.data(), out.data()));
    const std::vector<float> mid(inter.begin() + (split - 1) * ch * (k - 1),
                                 inter.begin() + split * ch * (k - 1));
    EXPECT_EQ(state, mid) << "split " << split;
    causal_conv1d(cv.params(x.data() + split * ch, n - split, state.data(), out.data() + split * ch));
    EXPECT_EQ(out, whole_out) << "split " << split;
    EXPECT_EQ(state, whole_state) << "split " << split;
  }
}

TEST(CausalConv1d, InPlaceAndStridedInputsMatch) {
  const int64_t ch = 70, k = 4, n = 6, row = ch + 10;
  const Conv cv(ch, k, 41);
  const std::vector<float> x = uniform(n * ch, 42), init = uniform(ch * (k - 1), 43);
  std::vector<float> state = init, out(n * ch);
  causal_conv1d(cv.params(x.data(), n, state.data(), out.data()));

  std::vector<float> inplace = x, state2 = init;
  causal_conv1d(cv.params(inplace.data(), n, state2.data(), inplace.data()));
  EXPECT_EQ(inplace, out);

  std::vector<float> wide(n * row, 5.f), state3 = init, out3(n * ch);
  for (int64_t t = 0; t < n; ++t) std::copy_n(x.data() + t * ch, ch, wide.data() + t * row + 3);
  CausalConv1dParams p = cv.params(wide.data() + 3, n, state3.data(), out3.data());
  p.x_row_stride = row;
  causal_conv1d(p);
  EXPECT_EQ(out3, out);
  EXPECT_EQ(state3, state);
}

TEST(CausalConv1d, RejectsBadShapes) {
  const Conv cv(8, 4, 1);
  std::vector<float> x(16), state(24), out(16);
  CausalConv1dParams p = cv.params(x.data(), 2, state.data(), out.data());
  p.x_row_stride = 4;
  EXPECT_THROW(causal_conv1d(p), Error);
  p.x_row_stride = 0;
  p.kernel_size = 0;
  EXPECT_THROW(causal_conv1d(p), Error);
}

}  // namespace
}  // namespace strata::cpu
