// Mamba-2 SSD scan, recurrent and chunked forms; see the header for the math. Heads are split
// across threads (each head reads its group's B and C); loops inside a head are serial f32.
#include "strata/ops/cpu/ssd_scan.h"
#include "strata/ops/ssd_scan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/ops/cpu/simd_f32.h"

namespace strata::cpu {
namespace {

using Params = SsdScanParams;

struct Layout {
  int64_t heads_per_group;
  int64_t x_stride, dt_stride, b_stride, c_stride;
};

Layout resolve_layout(const Params& p) {
  const int64_t bc_width = p.n_groups * p.state_size;
  return {.heads_per_group = p.num_heads / p.n_groups,
          .x_stride = p.x_row_stride > 0 ? p.x_row_stride : p.num_heads * p.head_dim,
          .dt_stride = p.dt_row_stride > 0 ? p.dt_row_stride : p.num_heads,
          .b_stride = p.b_row_stride > 0 ? p.b_row_stride : bc_width,
          .c_stride = p.c_row_stride > 0 ? p.c_row_stride : bc_width};
}

// Pointers into token t's rows for head h.
struct TokenRows {
  const float* x;  // [head_dim]
  const float* b;  // [state_size]
  const float* c;  // [state_size]
  float dt;
};

TokenRows token_rows(const Params& p, const Layout& l, int64_t t, int64_t h) {
  const int64_t group = h / l.heads_per_group;
  return {.x = p.x + t * l.x_stride + h * p.head_dim,
          .b = p.B + t * l.b_stride + group * p.state_size,
          .c = p.C + t * l.c_stride + group * p.state_size,
          .dt = p.dt[t * l.dt_stride + h]};
}

void recurrent_head(const Params& p, const Layout& l, int64_t h) {
  const int64_t hd = p.head_dim, ns = p.state_size, state_elems = hd * ns;
  float* state = p.state + h * state_elems;
  const float d_skip = p.D != nullptr ? p.D[h] : 0.f;
  for (int64_t t = 0; t < p.num_tokens; ++t) {
    const TokenRows r = token_rows(p, l, t, h);
    const float decay = std::exp(r.dt * p.A[h]);
    float* y = p.y + (t * p.num_heads + h) * hd;
    for (int64_t i = 0; i < hd; ++i) {
      float* row = state + i * ns;
      simd::scale(row, decay, ns);
      simd::axpy(row, r.dt * r.x[i], r.b, ns);
      y[i] = simd::dot(row, r.c, ns) + r.x[i] * d_skip;
    }
    if (p.intermediate_states != nullptr) {
      std::memcpy(p.intermediate_states + (t * p.num_heads + h) * state_elems, state,
                  sizeof(float) * state_elems);
    }
  }
}

// Per-thread buffers for one chunk of one head.
struct ChunkScratch {
  std::vector<float> xbar;    // [chunk_size, head_dim]: x * dt
  std::vector<float> acs;     // [chunk_size]: cumulative A*dt inside the chunk
  std::vector<float> seg;     // [chunk_size]: segment sums a[s+1..l] for the current row l
  std::vector<float> acc;     // [head_dim]
  std::vector<float> states;  // [head_dim, state_size]: the chunk's own contribution to S
  std::vector<float> a;       // [chunk_size]: A*dt
  void resize(int64_t chunk, int64_t hd, int64_t ns) {
    xbar.resize(chunk * hd), acs.resize(chunk), seg.resize(chunk), acc.resize(hd);
    states.resize(hd * ns), a.resize(chunk);
  }
};

void load_chunk(const Params& p, const Layout& l, int64_t t0, int64_t c, int64_t h,
                ChunkScratch& s) {
  float running = 0.f;
  for (int64_t i = 0; i < c; ++i) {
    const TokenRows r = token_rows(p, l, t0 + i, h);
    s.a[i] = p.A[h] * r.dt;
    running += s.a[i];
    s.acs[i] = running;
    for (int64_t d = 0; d < p.head_dim; ++d) s.xbar[i * p.head_dim + d] = r.x[d] * r.dt;
  }
}

// y_l = Σ_{s<=l} (C_l·B_s) exp(a[s+1..l]) xbar_s  +  exp(acs_l) (S_prev C_l)  +  D x_l.
void chunk_outputs(const Params& p, const Layout& l, int64_t t0, int64_t c, int64_t h,
                   const float* state, ChunkScratch& s) {
  const int64_t hd = p.head_dim, ns = p.state_size;
  const float d_skip = p.D != nullptr ? p.D[h] : 0.f;
  for (int64_t row = 0; row < c; ++row) {
    // HF's segment_sum adds a[s+1], a[s+2], ... in that order; extend each entry by a[row].
    for (int64_t j = 0; j < row; ++j) s.seg[j] += s.a[row];
    s.seg[row] = 0.f;
    const TokenRows r = token_rows(p, l, t0 + row, h);
    std::fill(s.acc.begin(), s.acc.end(), 0.f);
    for (int64_t j = 0; j <= row; ++j) {
      const float m = simd::dot(r.c, token_rows(p, l, t0 + j, h).b, ns) * std::exp(s.seg[j]);
      simd::axpy(s.acc.data(), m, s.xbar.data() + j * hd, hd);
    }
    const float out_decay = std::exp(s.acs[row]);
    float* y = p.y + ((t0 + row) * p.num_heads + h) * hd;
    for (int64_t d = 0; d < hd; ++d) {
      const float y_off = simd::dot(r.c, state + d * ns, ns) * out_decay;
      y[d] = (s.acc[d] + y_off) + d_skip * r.x[d];
    }
  }
}

// S = exp(acs_last) S + Σ_s (B_s exp(a[s+1..last])) ⊗ xbar_s. s.seg holds the last row's
// segment sums (left by chunk_outputs): HF's acs_last - acs_s, without the cancellation that
// costs f32 digits once the cumulative sum is large.
void chunk_state(const Params& p, const Layout& l, int64_t t0, int64_t c, int64_t h,
                 float* state, ChunkScratch& s) {
  const int64_t hd = p.head_dim, ns = p.state_size;
  const float total = s.acs[c - 1];
  std::fill(s.states.begin(), s.states.end(), 0.f);
  for (int64_t j = 0; j < c; ++j) {
    const float w = std::exp(s.seg[j]);
    const float* b = token_rows(p, l, t0 + j, h).b;
    const float* xj = s.xbar.data() + j * hd;
    for (int64_t d = 0; d < hd; ++d) simd::axpy(s.states.data() + d * ns, w * xj[d], b, ns);
  }
  const float chunk_decay = std::exp(total);
  for (int64_t i = 0; i < hd * ns; ++i) state[i] = chunk_decay * state[i] + s.states[i];
}

void chunked_head(const Params& p, const Layout& l, int64_t h, ChunkScratch& s) {
  float* state = p.state + h * p.head_dim * p.state_size;
  for (int64_t t0 = 0; t0 < p.num_tokens; t0 += p.chunk_size) {
    const int64_t c = std::min(p.chunk_size, p.num_tokens - t0);
    load_chunk(p, l, t0, c, h, s);
    chunk_outputs(p, l, t0, c, h, state, s);
    chunk_state(p, l, t0, c, h, state, s);
  }
}

void check_stride(const char* name, int64_t stride, int64_t width) {
  if (stride < 0 || (stride != 0 && stride < width)) {
    fail("ssd_scan: {} is {}; it must be 0 (packed) or at least the row width {}", name, stride,
         width);
  }
}

}  // namespace

void validate(const SsdScanParams& p) {
  if (p.num_tokens < 0) fail("ssd_scan: num_tokens is {}; it must be >= 0", p.num_tokens);
  if (p.num_heads <= 0 || p.head_dim <= 0 || p.n_groups <= 0 || p.state_size <= 0) {
    fail("ssd_scan: num_heads {}, head_dim {}, n_groups {}, state_size {} must all be > 0",
         p.num_heads, p.head_dim, p.n_groups, p.state_size);
  }
  if (p.num_heads % p.n_groups != 0) {
    fail("ssd_scan: num_heads {} is not a multiple of n_groups {}", p.num_heads, p.n_groups);
  }
  if (p.chunk_size <= 0) fail("ssd_scan: chunk_size is {}; it must be > 0", p.chunk_size);
  if (p.state == nullptr || p.A == nullptr) fail("ssd_scan: state and A must be set");
  if (p.num_tokens > 0 &&
      (p.x == nullptr || p.dt == nullptr || p.B == nullptr || p.C == nullptr || p.y == nullptr)) {
    fail("ssd_scan: x, dt, B, C and y must be set for {} tokens", p.num_tokens);
  }
  check_stride("x_row_stride", p.x_row_stride, p.num_heads * p.head_dim);
  check_stride("dt_row_stride", p.dt_row_stride, p.num_heads);
  check_stride("b_row_stride", p.b_row_stride, p.n_groups * p.state_size);
  check_stride("c_row_stride", p.c_row_stride, p.n_groups * p.state_size);
}

void ssd_scan_recurrent(const SsdScanParams& p) {
  validate(p);
  if (p.num_tokens == 0) return;
  const Layout l = resolve_layout(p);
  parallel_for(p.num_heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t h = begin; h < end; ++h) recurrent_head(p, l, h);
  });
}

void ssd_scan_chunked(const SsdScanParams& p) {
  validate(p);
  if (p.intermediate_states != nullptr) {
    fail("ssd_scan_chunked: intermediate_states is set; use the recurrent form for rows that "
         "need per-token states");
  }
  if (p.num_tokens == 0) return;
  const Layout l = resolve_layout(p);
  parallel_for(p.num_heads, 1, [&](int64_t begin, int64_t end) {
    ChunkScratch s;
    s.resize(std::min(p.chunk_size, p.num_tokens), p.head_dim, p.state_size);
    for (int64_t h = begin; h < end; ++h) chunked_head(p, l, h, s);
  });
}

}  // namespace strata::cpu

namespace strata::cpu {

// The discretisation transformers computes before its scan, then the recurrent form for short
// or verify segments and HF's chunked SSD for prefill. A batched decode step is exactly the
// per-row call for every token with its slot's state.
void ssd_scan(const ops::SsdScanArgs& args, const ops::SsdScanOptions& options) {
  const int64_t t = args.xbc.dim(0), nh = args.state.dim(-3), hd = args.state.dim(-2);
  const int64_t n = args.state.dim(-1);
  if (t == 0) return;
  STRATA_CHECK(args.xbc.dtype() == DType::kF32 && args.dt.dtype() == DType::kF32 &&
               args.y.dtype() == DType::kF32);
  std::vector<float> dt(t * nh), a(nh);
  for (int64_t h = 0; h < nh; ++h) a[h] = -std::exp(args.A_log.data_as<float>()[h]);
  for (int64_t i = 0; i < t * nh; ++i) {
    const float x = args.dt.data_as<float>()[i] + args.dt_bias.data_as<float>()[i % nh];
    const float softplus = x > 20.0f ? x : std::log1p(std::exp(x));
    dt[i] = std::min(std::max(softplus, options.dt_min), options.dt_max);
  }
  const float* xbc = args.xbc.data_as<float>();
  const int64_t stride = args.xbc.dim(1), bc = options.n_groups * n;
  SsdScanParams p{
      .x = xbc, .dt = dt.data(), .A = a.data(), .B = xbc + nh * hd, .C = xbc + nh * hd + bc,
      .D = args.D.defined() ? args.D.data_as<float>() : nullptr,
      .state = args.state.data_as<float>(), .y = args.y.data_as<float>(),
      .intermediate_states =
          args.intermediate_states.defined() ? args.intermediate_states.data_as<float>() : nullptr,
      .num_tokens = t, .num_heads = nh, .head_dim = hd, .n_groups = options.n_groups,
      .state_size = n, .x_row_stride = stride, .b_row_stride = stride, .c_row_stride = stride,
      .chunk_size = options.chunk_size};
  constexpr int64_t kChunkedMinTokens = 16;
  if (!args.state_slots.defined()) {
    if (p.intermediate_states != nullptr || t < kChunkedMinTokens) {
      ssd_scan_recurrent(p);
    } else {
      ssd_scan_chunked(p);
    }
    return;
  }
  const int64_t num_slots = args.state.dim(0), slot_elems = nh * hd * n;
  for (int64_t r = 0; r < t; ++r) {
    const int32_t slot = args.state_slots.data_as<int32_t>()[r];
    if (slot < 0 || slot >= num_slots)
      fail("ssd_scan: state_slots[{}] is {}, outside the {} slots of state", r, slot, num_slots);
    SsdScanParams row = p;
    row.x += r * stride, row.B += r * stride, row.C += r * stride;
    row.dt += r * nh, row.y += r * nh * hd, row.state += slot * slot_elems;
    row.num_tokens = 1;
    ssd_scan_recurrent(row);
  }
}

}  // namespace strata::cpu
