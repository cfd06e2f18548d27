// Mamba-2 SSD scan: recurrent and chunked forms against a naive double-precision reference
// (HF's single-token cache path written out), against each other, split-equals-whole,
// per-token intermediate states and strided rows.
#include "strata/ops/cpu/ssd_scan.h"

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
  int64_t num_tokens, num_heads, head_dim, n_groups, state_size, chunk_size;
};

struct Inputs {
  Case c;
  std::vector<float> x, dt, A, B, C, D, state;
  Inputs(Case cs, uint32_t seed, float dt_hi = 0.5f) : c(cs) {
    x = uniform(c.num_tokens * c.num_heads * c.head_dim, seed + 1, -1.f, 1.f);
    dt = uniform(c.num_tokens * c.num_heads, seed + 2, 0.001f, dt_hi);
    A = uniform(c.num_heads, seed + 3, -4.f, -0.5f);
    B = uniform(c.num_tokens * c.n_groups * c.state_size, seed + 4, -1.f, 1.f);
    C = uniform(c.num_tokens * c.n_groups * c.state_size, seed + 5, -1.f, 1.f);
    D = uniform(c.num_heads, seed + 6, 0.5f, 1.5f);
    state = uniform(c.num_heads * c.head_dim * c.state_size, seed + 7, -0.5f, 0.5f);
  }
  SsdScanParams params(int64_t t0, int64_t n, float* st, float* y, float* inter) const {
    const int64_t bc = c.n_groups * c.state_size;
    return {.x = x.data() + t0 * c.num_heads * c.head_dim,
            .dt = dt.data() + t0 * c.num_heads,
            .A = A.data(),
            .B = B.data() + t0 * bc,
            .C = C.data() + t0 * bc,
            .D = D.data(),
            .state = st,
            .y = y,
            .intermediate_states = inter,
            .num_tokens = n,
            .num_heads = c.num_heads,
            .head_dim = c.head_dim,
            .n_groups = c.n_groups,
            .state_size = c.state_size,
            .chunk_size = c.chunk_size};
  }
};

// S = S*exp(dt*A) + dt*B ⊗ x;  y = S·C + D*x, in double, B and C repeat-interleaved over heads.
void reference(const Inputs& in, std::vector<double>& state, std::vector<double>& y) {
  const Case& c = in.c;
  const int64_t hd = c.head_dim, ns = c.state_size, rep = c.num_heads / c.n_groups;
  y.assign(c.num_tokens * c.num_heads * hd, 0.0);
  for (int64_t t = 0; t < c.num_tokens; ++t) {
    for (int64_t h = 0; h < c.num_heads; ++h) {
      const double dt = in.dt[t * c.num_heads + h];
      const double decay = std::exp(dt * in.A[h]);
      const float* b = in.B.data() + (t * c.n_groups + h / rep) * ns;
      const float* cc = in.C.data() + (t * c.n_groups + h / rep) * ns;
      const float* x = in.x.data() + (t * c.num_heads + h) * hd;
      double* s = state.data() + h * hd * ns;
      for (int64_t i = 0; i < hd; ++i) {
        double acc = 0;
        for (int64_t n = 0; n < ns; ++n) {
          s[i * ns + n] = s[i * ns + n] * decay + dt * b[n] * x[i];
          acc += s[i * ns + n] * cc[n];
        }
        y[(t * c.num_heads + h) * hd + i] = acc + double(in.D[h]) * x[i];
      }
    }
  }
}

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
  std::vector<float> state, y;
};

Result run_scan(const Inputs& in, bool chunked, int64_t split = -1) {
  const Case& c = in.c;
  Result r{in.state, std::vector<float>(c.num_tokens * c.num_heads * c.head_dim, -7.f)};
  const int64_t cut = split < 0 ? c.num_tokens : split;
  const int64_t y_row = c.num_heads * c.head_dim;
  for (auto [t0, n] : {std::pair{int64_t{0}, cut}, std::pair{cut, c.num_tokens - cut}}) {
    if (n == 0) continue;
    const SsdScanParams p = in.params(t0, n, r.state.data(), r.y.data() + t0 * y_row, nullptr);
    chunked ? ssd_scan_chunked(p) : ssd_scan_recurrent(p);
  }
  return r;
}

const std::vector<Case> kCases = {
    {1, 4, 8, 1, 16, 64},    {63, 4, 8, 2, 16, 64},  {64, 2, 16, 1, 8, 64},
    {65, 6, 8, 3, 16, 64},   {200, 4, 8, 2, 16, 64}, {200, 2, 4, 2, 32, 256},
    {37, 8, 4, 1, 8, 16},
};

TEST(SsdScan, BothFormsMatchNaiveReference) {
  uint32_t seed = 20;
  for (const Case& c : kCases) {
    for (float dt_hi : {0.5f, 8.f}) {  // 8: decays underflow inside a chunk
      const Inputs in(c, seed += 10, dt_hi);
      std::vector<double> ref_state(in.state.begin(), in.state.end()), ref_y;
      reference(in, ref_state, ref_y);
      for (bool chunked : {false, true}) {
        const Result r = run_scan(in, chunked);
        EXPECT_LT(rel_diff(r.y, ref_y), 1e-5) << "L=" << c.num_tokens << " chunked=" << chunked;
        EXPECT_LT(rel_diff(r.state, ref_state), 1e-5) << "L=" << c.num_tokens << " chunked=" << chunked;
      }
    }
  }
}

TEST(SsdScan, ChunkedMatchesRecurrent) {
  uint32_t seed = 600;
  for (const Case& c : kCases) {
    for (float dt_hi : {0.5f, 8.f}) {  // 8: decays underflow inside a chunk
      const Inputs in(c, seed += 10, dt_hi);
      const Result rec = run_scan(in, false), chk = run_scan(in, true);
      EXPECT_LT(rel_diff(chk.y, rec.y), 1e-5) << "L=" << c.num_tokens << " dt<" << dt_hi;
      EXPECT_LT(rel_diff(chk.state, rec.state), 1e-5) << "L=" << c.num_tokens << " dt<" << dt_hi;
    }
  }
}

TEST(SsdScan, SplitSegmentEqualsWholeRun) {
  const Inputs in({200, 4, 8, 2, 16, 64}, 88);
  for (bool chunked : {false, true}) {
    const Result whole = run_scan(in, chunked);
    for (int64_t split : {1, 17, 63, 64, 65, 128, 199}) {
      const Result parts = run_scan(in, chunked, split);
      EXPECT_LT(rel_diff(parts.y, whole.y), 1e-5) << "split=" << split;
      EXPECT_LT(rel_diff(parts.state, whole.state), 1e-5) << "split=" << split;
    }
  }
  const Result whole = run_scan(in, false), parts = run_scan(in, false, 91);
  EXPECT_EQ(parts.y, whole.y);
  EXPECT_EQ(parts.state, whole.state);
}

TEST(SsdScan, IntermediateStatesEqualShorterRuns) {
  const Case c{9, 4, 4, 2, 8, 64};
  const Inputs in(c, 404);
  const int64_t state_elems = c.num_heads * c.head_dim * c.state_size;
  std::vector<float> state = in.state, y(c.num_tokens * c.num_heads * c.head_dim);
  std::vector<float> inter(c.num_tokens * state_elems);
  ssd_scan_recurrent(in.params(0, c.num_tokens, state.data(), y.data(), inter.data()));
  for (int64_t i = 0; i < c.num_tokens; ++i) {
    std::vector<float> short_state = in.state, short_y(y.size());
    ssd_scan_recurrent(in.params(0, i + 1, short_state.data(), short_y.data(), nullptr));
    const std::vector<float> got(inter.begin() + i * state_elems, inter.begin() + (i + 1) * state_elems);
    EXPECT_EQ(got, short_state) << "token " << i;
  }
}

TEST(SsdScan, StridedRowsMatchPackedRows) {
  // x, B, C as column ranges of one conv output row [x | B | C]; dt from a wider projection.
  const Case c{70, 4, 8, 2, 16, 32};
  const Inputs in(c, 909);
  const int64_t xw = c.num_heads * c.head_dim, bc = c.n_groups * c.state_size;
  const int64_t row = xw + 2 * bc, dt_row = c.num_heads + 3;
  std::vector<float> mixed(c.num_tokens * row), dts(c.num_tokens * dt_row);
  for (int64_t t = 0; t < c.num_tokens; ++t) {
    std::copy_n(in.x.data() + t * xw, xw, mixed.data() + t * row);
    std::copy_n(in.B.data() + t * bc, bc, mixed.data() + t * row + xw);
    std::copy_n(in.C.data() + t * bc, bc, mixed.data() + t * row + xw + bc);
    std::copy_n(in.dt.data() + t * c.num_heads, c.num_heads, dts.data() + t * dt_row);
  }
  for (bool chunked : {false, true}) {
    const Result packed = run_scan(in, chunked);
    Result strided{in.state, std::vector<float>(packed.y.size())};
    SsdScanParams p = in.params(0, c.num_tokens, strided.state.data(), strided.y.data(), nullptr);
    p.x = mixed.data(), p.B = mixed.data() + xw, p.C = mixed.data() + xw + bc, p.dt = dts.data();
    p.x_row_stride = p.b_row_stride = p.c_row_stride = row;
    p.dt_row_stride = dt_row;
    chunked ? ssd_scan_chunked(p) : ssd_scan_recurrent(p);
    EXPECT_EQ(strided.y, packed.y);
    EXPECT_EQ(strided.state, packed.state);
  }
}

TEST(SsdScan, RejectsBadShapes) {
  const Inputs in({4, 6, 4, 4, 8, 64}, 1);
  std::vector<float> state = in.state, y(4 * 6 * 4);
  SsdScanParams p = in.params(0, 4, state.data(), y.data(), nullptr);
  EXPECT_THROW(ssd_scan_recurrent(p), Error);  // 6 heads over 4 groups
  p.n_groups = 2;
  p.b_row_stride = 3;
  EXPECT_THROW(ssd_scan_chunked(p), Error);
  p.b_row_stride = 0;
  p.chunk_size = 0;
  EXPECT_THROW(ssd_scan_chunked(p), Error);
}

}  // namespace
}  // namespace strata::cpu
