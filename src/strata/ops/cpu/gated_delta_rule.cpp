// Gated delta rule, recurrent and chunked (WY / UT-transform) forms; see the header for the math.
// Each value head is independent: heads are split across threads, and every thread keeps its
// own scratch, so the loops inside a head are plain serial f32 arithmetic.
#include "strata/ops/cpu/gated_delta_rule.h"
#include "strata/ops/gated_delta_rule.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/ops/cpu/simd_f32.h"

namespace strata::cpu {
namespace {

using Params = GatedDeltaRuleParams;

// Strides and head mapping with the "0 means packed" defaults resolved.
struct Layout {
  int64_t num_k_heads, heads_per_key_head;
  int64_t q_stride, k_stride, v_stride;
  float scale;
};

Layout resolve_layout(const Params& p) {
  Layout l;
  l.num_k_heads = p.num_k_heads > 0 ? p.num_k_heads : p.num_v_heads;
  l.heads_per_key_head = p.num_v_heads / l.num_k_heads;
  const int64_t qk_width = l.num_k_heads * p.k_head_dim;
  l.q_stride = p.q_row_stride > 0 ? p.q_row_stride : qk_width;
  l.k_stride = p.k_row_stride > 0 ? p.k_row_stride : qk_width;
  l.v_stride = p.v_row_stride > 0 ? p.v_row_stride : p.num_v_heads * p.v_head_dim;
  // HF: scale = 1 / k_head_dim ** 0.5 in double, applied to an f32 tensor.
  l.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.k_head_dim)));
  return l;
}

// dst = src (l2-normalised as HF's l2norm when asked) * scale, in HF's order of roundings.
void load_qk_row(const float* src, int64_t n, bool l2norm, float scale, float* dst) {
  if (l2norm) {
    float sum_sq = 0.f;
    for (int64_t i = 0; i < n; ++i) sum_sq += src[i] * src[i];
    const float inv_norm = 1.f / std::sqrt(sum_sq + 1e-6f);
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] * inv_norm;
  } else {
    std::memcpy(dst, src, sizeof(float) * n);
  }
  if (scale != 1.f) {
    for (int64_t i = 0; i < n; ++i) dst[i] *= scale;
  }
}

const float* q_row(const Params& p, const Layout& l, int64_t t, int64_t h) {
  return p.q + t * l.q_stride + (h / l.heads_per_key_head) * p.k_head_dim;
}
const float* k_row(const Params& p, const Layout& l, int64_t t, int64_t h) {
  return p.k + t * l.k_stride + (h / l.heads_per_key_head) * p.k_head_dim;
}
const float* v_row(const Params& p, const Layout& l, int64_t t, int64_t h) {
  return p.v + t * l.v_stride + h * p.v_head_dim;
}

// One token of one head: S = S*exp(g); S += k ⊗ beta*(v - kᵀS); out = qᵀS.
void recurrent_step(const Params& p, const float* q, const float* k, const float* v, float decay,
                    float beta, float* state, float* scratch, float* out) {
  const int64_t dk = p.k_head_dim, dv = p.v_head_dim;
  float* delta = scratch;  // [v_head_dim]
  std::fill(delta, delta + dv, 0.f);
  for (int64_t i = 0; i < dk; ++i) {
    float* row = state + i * dv;
    simd::scale(row, decay, dv);
    simd::axpy(delta, k[i], row, dv);
  }
  for (int64_t j = 0; j < dv; ++j) delta[j] = (v[j] - delta[j]) * beta;
  std::fill(out, out + dv, 0.f);
  for (int64_t i = 0; i < dk; ++i) {
    float* row = state + i * dv;
    simd::axpy(row, k[i], delta, dv);
    simd::axpy(out, q[i], row, dv);
  }
}

void recurrent_head(const Params& p, const Layout& l, int64_t h, std::vector<float>& scratch) {
  const int64_t dk = p.k_head_dim, dv = p.v_head_dim, num_heads = p.num_v_heads;
  const int64_t state_elems = dk * dv;
  scratch.resize(2 * dk + dv);
  float* q = scratch.data();
  float* k = q + dk;
  float* delta = k + dk;
  float* state = p.state + h * state_elems;
  for (int64_t t = 0; t < p.num_tokens; ++t) {
    load_qk_row(q_row(p, l, t, h), dk, p.l2norm_qk, l.scale, q);
    load_qk_row(k_row(p, l, t, h), dk, p.l2norm_qk, 1.f, k);
    const float decay = std::exp(p.g[t * num_heads + h]);
    float* out = p.out + (t * num_heads + h) * dv;
    recurrent_step(p, q, k, v_row(p, l, t, h), decay, p.beta[t * num_heads + h], state, delta, out);
    if (p.intermediate_states != nullptr) {
      std::memcpy(p.intermediate_states + (t * num_heads + h) * state_elems, state,
                  sizeof(float) * state_elems);
    }
  }
}

// Per-thread buffers for one chunk of one head; c is the chunk length (<= chunk_size).
struct ChunkScratch {
  std::vector<float> q, k, w;  // [chunk_size, k_head_dim]: q scaled, k, then w = T (k*beta*exp(gc))
  std::vector<float> u;        // [chunk_size, v_head_dim]: T (v*beta), then v_new = u - w S
  std::vector<float> t;        // [chunk_size, chunk_size]: the UT matrix T, lower triangular
  std::vector<float> decay;    // [chunk_size, chunk_size]: exp(g[j+1] + ... + g[i]) for j <= i
  std::vector<float> gc, beta; // [chunk_size]: cumulative log decay inside the chunk, beta
  std::vector<float> seg;      // [chunk_size]: g[j+1..i] for the row being built
  std::vector<float> acc;      // [v_head_dim]
  void resize(int64_t chunk, int64_t dk, int64_t dv) {
    q.resize(chunk * dk), k.resize(chunk * dk), w.resize(chunk * dk);
    u.resize(chunk * dv), t.resize(chunk * chunk), decay.resize(chunk * chunk);
    gc.resize(chunk), beta.resize(chunk), seg.resize(chunk), acc.resize(dv);
  }
};

// T = (I - tril(-diag(beta) K Kᵀ ∘ decay, -1))⁻¹ by forward substitution, as HF's row loop.
void build_ut_matrix(int64_t c, int64_t dk, int64_t chunk, ChunkScratch& s) {
  float* t = s.t.data();
  for (int64_t i = 0; i < c; ++i) {
    const float* ki = s.k.data() + i * dk;
    for (int64_t j = 0; j < i; ++j) {
      // k_beta @ kᵀ: beta multiplies k_i before the dot, as HF.
      const float kb_dot = simd::dot(ki, s.k.data() + j * dk, dk) * s.beta[i];
      t[i * chunk + j] = -(kb_dot * s.decay[i * chunk + j]);
    }
  }
  // Row i uses its original entries for m > j (not yet overwritten when j ascends).
  for (int64_t i = 1; i < c; ++i) {
    for (int64_t j = 0; j < i; ++j) {
      float acc = t[i * chunk + j];
      for (int64_t m = j + 1; m < i; ++m) acc += t[i * chunk + m] * t[m * chunk + j];
      t[i * chunk + j] = acc;
    }
  }
  for (int64_t i = 0; i < c; ++i) t[i * chunk + i] = 1.f;
}

// u = T (v*beta); w = T (k*beta*exp(gc)).
void apply_ut_matrix(const Params& p, const Layout& l, int64_t t0, int64_t c, int64_t h,
                     ChunkScratch& s) {
  const int64_t dk = p.k_head_dim, dv = p.v_head_dim, chunk = p.chunk_size;
  std::fill(s.u.begin(), s.u.begin() + c * dv, 0.f);
  std::fill(s.w.begin(), s.w.begin() + c * dk, 0.f);
  for (int64_t j = 0; j < c; ++j) {
    const float* vj = v_row(p, l, t0 + j, h);
    const float* kj = s.k.data() + j * dk;
    const float bj = s.beta[j];
    const float gj = std::exp(s.gc[j]);
    for (int64_t i = j; i < c; ++i) {
      const float tij = s.t[i * chunk + j];
      float* ui = s.u.data() + i * dv;
      float* wi = s.w.data() + i * dk;
      simd::axpy(ui, tij * bj, vj, dv);
      simd::axpy(wi, tij * bj * gj, kj, dk);
    }
  }
}

// Inputs of one chunk: scaled q, k, beta, and the running sum of g.
void load_chunk(const Params& p, const Layout& l, int64_t t0, int64_t c, int64_t h,
                ChunkScratch& s) {
  const int64_t dk = p.k_head_dim, num_heads = p.num_v_heads;
  float g_sum = 0.f;
  for (int64_t i = 0; i < c; ++i) {
    load_qk_row(q_row(p, l, t0 + i, h), dk, p.l2norm_qk, l.scale, s.q.data() + i * dk);
    load_qk_row(k_row(p, l, t0 + i, h), dk, p.l2norm_qk, 1.f, s.k.data() + i * dk);
    const float g = p.g[(t0 + i) * num_heads + h];
    g_sum += g;
    s.gc[i] = g_sum;
    s.beta[i] = p.beta[(t0 + i) * num_heads + h];
    // HF's exp(gc_i - gc_j), summed directly so that a large gc costs no f32 digits.
    for (int64_t j = 0; j < i; ++j) s.seg[j] += g;
    s.seg[i] = 0.f;
    for (int64_t j = 0; j <= i; ++j) s.decay[i * p.chunk_size + j] = std::exp(s.seg[j]);
  }
}

// v_new = u - w S; out_i = (q_i exp(gc_i)) S + Σ_{j<=i} (q_i·k_j) exp(gc_i - gc_j) v_new_j;
// then S = S exp(gc_last) + Σ_j (k_j exp(gc_last - gc_j)) ⊗ v_new_j.
void chunk_output_and_state(const Params& p, int64_t t0, int64_t c, int64_t h, float* state,
                            ChunkScratch& s) {
  const int64_t dk = p.k_head_dim, dv = p.v_head_dim, num_heads = p.num_v_heads;
  for (int64_t i = 0; i < c; ++i) {
    float* ui = s.u.data() + i * dv;
    const float* wi = s.w.data() + i * dk;
    for (int64_t d = 0; d < dk; ++d) simd::axpy(ui, -wi[d], state + d * dv, dv);
  }
  for (int64_t i = 0; i < c; ++i) {
    const float* qi = s.q.data() + i * dk;
    const float qdecay = std::exp(s.gc[i]);
    float* out = p.out + ((t0 + i) * num_heads + h) * dv;
    std::fill(out, out + dv, 0.f);
    for (int64_t d = 0; d < dk; ++d) simd::axpy(out, qi[d] * qdecay, state + d * dv, dv);
    std::fill(s.acc.begin(), s.acc.end(), 0.f);
    for (int64_t j = 0; j <= i; ++j) {
      const float a = simd::dot(qi, s.k.data() + j * dk, dk) * s.decay[i * p.chunk_size + j];
      simd::axpy(s.acc.data(), a, s.u.data() + j * dv, dv);
    }
    for (int64_t e = 0; e < dv; ++e) out[e] += s.acc[e];
  }
  const float state_decay = std::exp(s.gc[c - 1]);
  simd::scale(state, state_decay, dk * dv);
  for (int64_t j = 0; j < c; ++j) {
    const float* kj = s.k.data() + j * dk;
    const float kdecay = s.decay[(c - 1) * p.chunk_size + j];
    const float* vj = s.u.data() + j * dv;
    for (int64_t d = 0; d < dk; ++d) simd::axpy(state + d * dv, kj[d] * kdecay, vj, dv);
  }
}

void chunked_head(const Params& p, const Layout& l, int64_t h, ChunkScratch& s) {
  float* state = p.state + h * p.k_head_dim * p.v_head_dim;
  for (int64_t t0 = 0; t0 < p.num_tokens; t0 += p.chunk_size) {
    const int64_t c = std::min(p.chunk_size, p.num_tokens - t0);
    load_chunk(p, l, t0, c, h, s);
    build_ut_matrix(c, p.k_head_dim, p.chunk_size, s);
    apply_ut_matrix(p, l, t0, c, h, s);
    chunk_output_and_state(p, t0, c, h, state, s);
  }
}

}  // namespace

void validate(const GatedDeltaRuleParams& p) {
  if (p.num_tokens < 0) fail("gated_delta_rule: num_tokens is {}; it must be >= 0", p.num_tokens);
  if (p.num_v_heads <= 0 || p.k_head_dim <= 0 || p.v_head_dim <= 0) {
    fail("gated_delta_rule: num_v_heads {}, k_head_dim {}, v_head_dim {} must all be > 0",
         p.num_v_heads, p.k_head_dim, p.v_head_dim);
  }
  const int64_t num_k_heads = p.num_k_heads > 0 ? p.num_k_heads : p.num_v_heads;
  if (p.num_k_heads < 0 || p.num_v_heads % num_k_heads != 0) {
    fail("gated_delta_rule: num_v_heads {} is not a multiple of num_k_heads {}", p.num_v_heads,
         p.num_k_heads);
  }
  if (p.chunk_size <= 0) fail("gated_delta_rule: chunk_size is {}; it must be > 0", p.chunk_size);
  if (p.state == nullptr) fail("gated_delta_rule: state pointer is null");
  if (p.num_tokens > 0 && (p.q == nullptr || p.k == nullptr || p.v == nullptr ||
                           p.g == nullptr || p.beta == nullptr || p.out == nullptr)) {
    fail("gated_delta_rule: q, k, v, g, beta and out must be set for {} tokens", p.num_tokens);
  }
  const int64_t qk_width = num_k_heads * p.k_head_dim;
  const int64_t v_width = p.num_v_heads * p.v_head_dim;
  if ((p.q_row_stride != 0 && p.q_row_stride < qk_width) ||
      (p.k_row_stride != 0 && p.k_row_stride < qk_width) ||
      (p.v_row_stride != 0 && p.v_row_stride < v_width) || p.q_row_stride < 0 ||
      p.k_row_stride < 0 || p.v_row_stride < 0) {
    fail("gated_delta_rule: row strides q {} k {} v {} are below the row widths {} (q, k) and {} "
         "(v)", p.q_row_stride, p.k_row_stride, p.v_row_stride, qk_width, v_width);
  }
}

void gated_delta_rule_recurrent(const GatedDeltaRuleParams& p) {
  validate(p);
  if (p.num_tokens == 0) return;
  const Layout l = resolve_layout(p);
  parallel_for(p.num_v_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch;
    for (int64_t h = begin; h < end; ++h) recurrent_head(p, l, h, scratch);
  });
}

void gated_delta_rule_chunked(const GatedDeltaRuleParams& p) {
  validate(p);
  if (p.intermediate_states != nullptr) {
    fail("gated_delta_rule_chunked: intermediate_states is set; use the recurrent form for "
         "rows that need per-token states");
  }
  if (p.num_tokens == 0) return;
  const Layout l = resolve_layout(p);
  parallel_for(p.num_v_heads, 1, [&](int64_t begin, int64_t end) {
    ChunkScratch s;
    s.resize(p.chunk_size, p.k_head_dim, p.v_head_dim);
    for (int64_t h = begin; h < end; ++h) chunked_head(p, l, h, s);
  });
}

}  // namespace strata::cpu

namespace strata::cpu {

// The gating transformers computes before its kernel, then the recurrent form for short or
// verify segments and the chunked form for prefill. A batched decode step is exactly the
// per-row call for every token with its slot's state.
void gated_delta_rule(const ops::GatedDeltaRuleArgs& args) {
  const int64_t t = args.qkv.dim(0), nv = args.state.dim(-3), dk = args.state.dim(-2);
  const int64_t dv = args.state.dim(-1), nk = (args.qkv.dim(1) - nv * dv) / (2 * dk);
  if (t == 0) return;
  STRATA_CHECK(args.qkv.dtype() == DType::kF32 && args.a.dtype() == DType::kF32 &&
               args.b.dtype() == DType::kF32 && args.out.dtype() == DType::kF32);
  std::vector<float> g(t * nv), beta(t * nv);
  const float* a = args.a.data_as<float>();
  const float* b = args.b.data_as<float>();
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t h = 0; h < nv; ++h) {
      const float x = a[i * nv + h] + args.dt_bias.data_as<float>()[h];
      const float softplus = x > 20.0f ? x : std::log1p(std::exp(x));
      g[i * nv + h] = -std::exp(args.A_log.data_as<float>()[h]) * softplus;
      beta[i * nv + h] = 1.0f / (1.0f + std::exp(-b[i * nv + h]));
    }
  }
  const float* qkv = args.qkv.data_as<float>();
  const int64_t stride = args.qkv.dim(1);
  GatedDeltaRuleParams p{
      .q = qkv, .k = qkv + nk * dk, .v = qkv + 2 * nk * dk, .g = g.data(), .beta = beta.data(),
      .state = args.state.data_as<float>(), .out = args.out.data_as<float>(),
      .intermediate_states =
          args.intermediate_states.defined() ? args.intermediate_states.data_as<float>() : nullptr,
      .num_tokens = t, .num_v_heads = nv, .num_k_heads = nk, .k_head_dim = dk, .v_head_dim = dv,
      .q_row_stride = stride, .k_row_stride = stride, .v_row_stride = stride};
  constexpr int64_t kChunkedMinTokens = 16;
  if (!args.state_slots.defined()) {
    if (p.intermediate_states != nullptr || t < kChunkedMinTokens) {
      gated_delta_rule_recurrent(p);
    } else {
      gated_delta_rule_chunked(p);
    }
    return;
  }
  const int64_t num_slots = args.state.dim(0), slot_elems = nv * dk * dv;
  for (int64_t r = 0; r < t; ++r) {
    const int32_t slot = args.state_slots.data_as<int32_t>()[r];
    if (slot < 0 || slot >= num_slots)
      fail("gated_delta_rule: state_slots[{}] is {}, outside the {} slots of state", r, slot, num_slots);
    GatedDeltaRuleParams row = p;
    row.q += r * stride, row.k += r * stride, row.v += r * stride;
    row.g += r * nv, row.beta += r * nv, row.out += r * nv * dv;
    row.state += slot * slot_elems;
    row.num_tokens = 1;
    gated_delta_rule_recurrent(row);
  }
}

}  // namespace strata::cpu
