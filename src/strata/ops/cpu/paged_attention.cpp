#include "strata/core/error.h"
#include "strata/ops/paged_attention.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "strata/core/parallel.h"

namespace strata::cpu {

namespace {

// A cache in f32, or in e4m3 (--kv-cache-dtype fp8: values rounded to nearest even, saturating
// at +-448, scale 1 as vLLM's default).
void store_rows(const float* src, const Tensor& cache, int64_t slot, int64_t elems) {
  if (cache.dtype() == DType::kF32) {
    std::memcpy(cache.data_as<float>() + slot * elems, src, elems * 4);
    return;
  }
  uint8_t* dst = cache.data_as<uint8_t>() + slot * elems;
  for (int64_t i = 0; i < elems; ++i) dst[i] = f32_to_fp8_e4m3(src[i]);
}

}  // namespace

void store_kv(const Tensor& k, const Tensor& v, const Tensor& slot_mapping, const Tensor& k_cache,
              const Tensor& v_cache) {
  STRATA_CHECK(k_cache.dtype() == DType::kF32 || k_cache.dtype() == DType::kF8_E4M3);
  const int64_t token_elems = k.dim(1) * k.dim(2);
  const int32_t* slots = slot_mapping.data_as<int32_t>();
  const int64_t num_slots = k_cache.dim(0) * k_cache.dim(1);
  for (int64_t t = 0; t < k.dim(0); ++t) {
    STRATA_CHECK_MSG(slots[t] >= 0 && slots[t] < num_slots, "slot {} of {}", slots[t], num_slots);
    store_rows(k.data_as<float>() + t * token_elems, k_cache, slots[t], token_elems);
    store_rows(v.data_as<float>() + t * token_elems, v_cache, slots[t], token_elems);
  }
}

namespace {

struct QueryJob {
  const float* q;  // [head_dim]
  float* out;      // [head_dim]
  const int32_t* block_table;
  int64_t kv_head;
  int64_t first_key;  // first visible key position
  int64_t last_key;   // last visible key position (inclusive)
  float sink;         // -inf when absent
};

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// a . b over one head's n floats.
inline float dot_head(const float* a, const float* b, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t d = 0;
  for (; d + 16 <= n; d += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + d), _mm256_loadu_ps(b + d), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + d + 8), _mm256_loadu_ps(b + d + 8), acc1);
  }
  float sum = hsum(_mm256_add_ps(acc0, acc1));
  for (; d < n; ++d) sum += a[d] * b[d];
  return sum;
}

// acc += p * v over one head's n floats.
inline void axpy_head(float p, const float* v, float* acc, int64_t n) {
  const __m256 pv = _mm256_set1_ps(p);
  int64_t d = 0;
  for (; d + 8 <= n; d += 8)
    _mm256_storeu_ps(acc + d, _mm256_fmadd_ps(pv, _mm256_loadu_ps(v + d), _mm256_loadu_ps(acc + d)));
  for (; d < n; ++d) acc[d] += p * v[d];
}

// Per-thread buffers, grown once and reused by every query the thread takes.
struct Scratch {
  std::vector<float> scores;  // [visible keys]
  std::vector<float> acc;     // [head_dim]
  std::vector<float> head;    // [head_dim]: an e4m3 cache's head widened
};

// The head at element `offset` of the cache as f32: in place, or widened into `tmp`.
inline const float* head_f32(const Tensor& cache, int64_t offset, int64_t head_dim, std::vector<float>& tmp) {
  if (cache.dtype() == DType::kF32) return cache.data_as<float>() + offset;
  static const std::array<float, 256> kValues = [] {
    std::array<float, 256> values{};
    for (int c = 0; c < 256; ++c) values[c] = fp8_e4m3_to_f32(static_cast<uint8_t>(c));
    return values;
  }();
  const uint8_t* codes = cache.data_as<uint8_t>() + offset;
  for (int64_t d = 0; d < head_dim; ++d) tmp[d] = kValues[codes[d]];
  return tmp.data();
}

void attend_one(const QueryJob& job, const Tensor& k_cache, const Tensor& v_cache,
                const ops::AttentionParams& params, Scratch& scratch) {
  const int64_t block_size = k_cache.dim(1), num_kv_heads = k_cache.dim(2), head_dim = k_cache.dim(3);
  const int64_t n = job.last_key - job.first_key + 1;
  scratch.scores.resize(n);
  scratch.acc.assign(head_dim, 0.0f);
  scratch.head.resize(head_dim);
  float* scores = scratch.scores.data();
  // Element offset of key position `pos` for this job's kv head, in either cache.
  auto offset = [&](int64_t pos) {
    const int64_t slot = job.block_table[pos / block_size] * block_size + pos % block_size;
    return (slot * num_kv_heads + job.kv_head) * head_dim;
  };
  float max_score = job.sink;
  for (int64_t j = 0; j < n; ++j) {
    const float* key = head_f32(k_cache, offset(job.first_key + j), head_dim, scratch.head);
    float s = dot_head(job.q, key, head_dim) * params.scale;
    if (params.logit_softcap > 0) s = params.logit_softcap * std::tanh(s / params.logit_softcap);
    scores[j] = s;
    max_score = std::max(max_score, s);
  }
  double denom = std::isinf(job.sink) ? 0.0 : std::exp(job.sink - max_score);
  for (int64_t j = 0; j < n; ++j) {
    scores[j] = std::exp(scores[j] - max_score);
    denom += scores[j];
  }
  for (int64_t j = 0; j < n; ++j)
    axpy_head(scores[j], head_f32(v_cache, offset(job.first_key + j), head_dim, scratch.head), scratch.acc.data(), head_dim);
  const float inv = static_cast<float>(1.0 / denom);
  for (int64_t d = 0; d < head_dim; ++d) job.out[d] = scratch.acc[d] * inv;
}

}  // namespace

void paged_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                     const ops::AttentionMetadata& meta, const ops::AttentionParams& params,
                     const Tensor& out) {
  const int64_t num_heads = q.dim(1), head_dim = q.dim(2);
  const int64_t group = num_heads / k_cache.dim(2);
  const int32_t* cu = meta.cu_seqlens.data_as<int32_t>();
  const int64_t max_blocks = meta.block_tables.dim(1);
  // Row of each token, so the parallel loop can run over (token, head) pairs.
  std::vector<int32_t> row_of(q.dim(0));
  for (int64_t r = 0; r < meta.num_rows; ++r)
    for (int32_t t = cu[r]; t < cu[r + 1]; ++t) row_of[t] = static_cast<int32_t>(r);
  parallel_for(q.dim(0) * num_heads, 4, [&](int64_t begin, int64_t end) {
    Scratch scratch;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / num_heads, h = item % num_heads;
      const int64_t r = row_of[t];
      const int64_t q_len = cu[r + 1] - cu[r];
      const int64_t kv_len = meta.kv_lens.data_as<int32_t>()[r];
      const int64_t pos = kv_len - q_len + (t - cu[r]);
      QueryJob job{.q = q.data_as<float>() + (t * num_heads + h) * head_dim,
                   .out = out.data_as<float>() + (t * num_heads + h) * head_dim,
                   .block_table = meta.block_tables.data_as<int32_t>() + r * max_blocks,
                   .kv_head = h / group,
                   .first_key = params.sliding_window > 0
                                    ? std::max<int64_t>(0, pos - params.sliding_window + 1) : 0,
                   .last_key = params.causal               ? pos
                               : params.sliding_window > 0 ? std::min(kv_len - 1, pos + params.sliding_window - 1)
                                                           : kv_len - 1,
                   .sink = params.sinks.defined() ? params.sinks.data_as<float>()[h] : -INFINITY};
      attend_one(job, k_cache, v_cache, params, scratch);
    }
  });
}

}  // namespace strata::cpu
