// Int16 activation dots (see int16_dot.h). Q4_1 and Q8_0, the types of SmolLM2's GGUF,
// run kDotRows weight rows per pass: one activation load feeds several rows, the rows'
// f16 scales convert in one vcvtph2ps, and the independent accumulators hide FMA latency.
#include "strata/ops/cpu/int16_dot.h"

#include <immintrin.h>

#include <cstring>

namespace strata::cpu {
namespace {

inline float half(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline int hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

inline __m256i load_act(const ActBlock& a, int half_index) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs + 16 * half_index));
}

inline __m256i widen_u8(const uint8_t* p) {
  return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline __m256i widen_s8(const uint8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Sum over 32 int16 weight quants (two vectors of 16) by one activation block, as 8 f32 lanes.
// |w| <= 127 and |x| <= 32767: each int32 lane sums 4 products, far from overflow.
inline __m256 dot_block(__m256i w_lo, __m256i w_hi, const ActBlock& a) {
  const __m256i sum = _mm256_add_epi32(_mm256_madd_epi16(w_lo, load_act(a, 0)),
                                       _mm256_madd_epi16(w_hi, load_act(a, 1)));
  return _mm256_cvtepi32_ps(sum);
}

inline int32_t load_u32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline int16_t load_u16(const uint8_t* p) {
  int16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// Rows stream from memory, and the hardware prefetcher alone left decode stalled on them
// (35 MB of Q4_1 matrices: 78 -> 50 us per 1536x576 matrix): fetch the same block of the
// row kPrefetchRows ahead. A prefetch past the weights' end does not fault.
constexpr int kPrefetchRows = 2 * kDotRows;
inline void prefetch_ahead(const uint8_t* p, int64_t row_bytes) {
  _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchRows * row_bytes), _MM_HINT_T0);
}

// Lane `lane` of v in all 8 lanes.
inline __m256 lane_of(__m256 v, int lane) { return _mm256_permutevar8x32_ps(v, _mm256_set1_epi32(lane)); }

// Q4_1 block: f16 d, f16 m, 16 bytes of nibbles (low: elements 0..15, high: 16..31).
// Row r's (d, m) pair times the block's (d, d_sum) lands in lanes 2r, 2r + 1 of `scales`.
template <int R>
void rows_q4_1(const uint8_t* w, int64_t row_bytes, const ActBlock* a, int64_t num_blocks, float* out) {
  static_assert(R >= 1 && R <= kDotRows);
  const __m256i low_mask = _mm256_set1_epi16(0x0f);
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  __m256 min_acc = _mm256_setzero_ps();  // lane 2r + 1: row r's sum of m * d * sum(qs)
  for (int64_t b = 0; b < num_blocks; ++b) {
    const uint8_t* blk = w + b * static_cast<int64_t>(sizeof(BlockQ4_1));
    const __m256i x0 = load_act(a[b], 0), x1 = load_act(a[b], 1);
    const __m256 act_scales = _mm256_castpd_ps(_mm256_broadcast_sd(reinterpret_cast<const double*>(&a[b].d)));
    const __m128i dm = _mm_setr_epi32(load_u32(blk), R > 1 ? load_u32(blk + row_bytes) : 0,
                                      R > 2 ? load_u32(blk + 2 * row_bytes) : 0,
                                      R > 3 ? load_u32(blk + 3 * row_bytes) : 0);
    const __m256 scales = _mm256_mul_ps(_mm256_cvtph_ps(dm), act_scales);
    min_acc = _mm256_add_ps(min_acc, scales);
    for (int r = 0; r < R; ++r) {
      prefetch_ahead(blk + r * row_bytes, row_bytes);
      const __m256i bytes = widen_u8(blk + r * row_bytes + 4);
      const __m256i sum = _mm256_add_epi32(_mm256_madd_epi16(_mm256_and_si256(bytes, low_mask), x0),
                                           _mm256_madd_epi16(_mm256_srli_epi16(bytes, 4), x1));
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), lane_of(scales, 2 * r), acc[r]);
    }
  }
  alignas(32) float mins[8];
  _mm256_store_ps(mins, min_acc);
  for (int r = 0; r < R; ++r) out[r] = hsum(acc[r]) + mins[2 * r + 1];
}

// Q8_0 block: f16 d, 32 int8 quants.
template <int R>
void rows_q8_0(const uint8_t* w, int64_t row_bytes, const ActBlock* a, int64_t num_blocks, float* out) {
  static_assert(R >= 1 && R <= kDotRows);
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  for (int64_t b = 0; b < num_blocks; ++b) {
    const uint8_t* blk = w + b * static_cast<int64_t>(sizeof(BlockQ8_0));
    const __m256i x0 = load_act(a[b], 0), x1 = load_act(a[b], 1);
    const __m128i d = _mm_setr_epi16(load_u16(blk), R > 1 ? load_u16(blk + row_bytes) : 0,
                                     R > 2 ? load_u16(blk + 2 * row_bytes) : 0,
                                     R > 3 ? load_u16(blk + 3 * row_bytes) : 0, 0, 0, 0, 0);
    const __m256 scales = _mm256_mul_ps(_mm256_cvtph_ps(d), _mm256_set1_ps(a[b].d));
    for (int r = 0; r < R; ++r) {
      prefetch_ahead(blk + r * row_bytes, row_bytes);
      const uint8_t* q = blk + r * row_bytes + 2;
      const __m256i sum = _mm256_add_epi32(_mm256_madd_epi16(widen_s8(q), x0),
                                           _mm256_madd_epi16(widen_s8(q + 16), x1));
      acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), lane_of(scales, r), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[r] = hsum(acc[r]);
}

template <template <int> class Kernel>
void rows_dispatch(const uint8_t* w, int64_t row_bytes, int num_rows, const ActBlock* a,
                   int64_t in_features, float* out) {
  const int64_t num_blocks = in_features / kQk;
  switch (num_rows) {
    case 4: return Kernel<4>::run(w, row_bytes, a, num_blocks, out);
    case 3: return Kernel<3>::run(w, row_bytes, a, num_blocks, out);
    case 2: return Kernel<2>::run(w, row_bytes, a, num_blocks, out);
    default: return Kernel<1>::run(w, row_bytes, a, num_blocks, out);
  }
}

template <int R> struct Q4_1Rows { static constexpr auto run = rows_q4_1<R>; };
template <int R> struct Q8_0Rows { static constexpr auto run = rows_q8_0<R>; };

float dot_q4_k(const uint8_t* w, const ActBlock* a, int64_t in_features) {
  const __m256i low_mask = _mm256_set1_epi16(0x0f);
  __m256 acc = _mm256_setzero_ps();
  float min_sum = 0.f;
  for (int64_t sb = 0; sb < in_features / kQkK; ++sb) {
    const uint8_t* blk = w + sb * sizeof(BlockQ4_K);
    const float d = half(blk), dmin = half(blk + 2);
    const ActBlock* ab = a + sb * (kQkK / kQk);
    for (int c = 0; c < 4; ++c) {  // 32 bytes: low nibbles are run 2c, high nibbles run 2c + 1
      const __m256i r0 = widen_u8(blk + 16 + 32 * c), r1 = widen_u8(blk + 32 + 32 * c);
      uint8_t sc0, m0, sc1, m1;
      unpack_scale_min_k4(2 * c, blk + 4, &sc0, &m0);
      unpack_scale_min_k4(2 * c + 1, blk + 4, &sc1, &m1);
      const ActBlock& a0 = ab[2 * c];
      const ActBlock& a1 = ab[2 * c + 1];
      const __m256 lo = dot_block(_mm256_and_si256(r0, low_mask), _mm256_and_si256(r1, low_mask), a0);
      const __m256 hi = dot_block(_mm256_srli_epi16(r0, 4), _mm256_srli_epi16(r1, 4), a1);
      acc = _mm256_fmadd_ps(lo, _mm256_set1_ps(d * sc0 * a0.d), acc);
      acc = _mm256_fmadd_ps(hi, _mm256_set1_ps(d * sc1 * a1.d), acc);
      min_sum += dmin * (static_cast<float>(m0) * a0.d_sum + static_cast<float>(m1) * a1.d_sum);
    }
  }
  return hsum(acc) - min_sum;
}

// Q6_K: 6-bit quants stored as q + 32, a scale per 16-run; each madd covers one 16-run.
float dot_q6_k(const uint8_t* w, const ActBlock* a, int64_t in_features) {
  const __m256i low_mask = _mm256_set1_epi8(0x0f);
  const __m256i two_bits = _mm256_set1_epi8(3);
  const __m256i offset = _mm256_set1_epi8(32);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t sb = 0; sb < in_features / kQkK; ++sb) {
    const uint8_t* blk = w + sb * sizeof(BlockQ6_K);
    const float d = half(blk + 208);
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = blk + 64 * h;
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 128 + 32 * h));
      const auto* sc = reinterpret_cast<const int8_t*>(blk + 192 + 8 * h);
      const ActBlock* ab = a + sb * (kQkK / kQk) + 4 * h;
      for (int r = 0; r < 4; ++r) {
        const __m256i l = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32 * (r & 1)));
        const __m256i low = _mm256_and_si256(r < 2 ? l : _mm256_srli_epi16(l, 4), low_mask);
        const __m256i top = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * r), two_bits);
        const __m256i q = _mm256_sub_epi8(_mm256_or_si256(low, _mm256_slli_epi16(top, 4)), offset);
        const __m256i q0 = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(q));
        const __m256i q1 = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(q, 1));
        const float scale = d * ab[r].d;
        const __m256 dot0 = _mm256_cvtepi32_ps(_mm256_madd_epi16(q0, load_act(ab[r], 0)));
        const __m256 dot1 = _mm256_cvtepi32_ps(_mm256_madd_epi16(q1, load_act(ab[r], 1)));
        acc = _mm256_fmadd_ps(dot0, _mm256_set1_ps(scale * sc[2 * r]), acc);
        acc = _mm256_fmadd_ps(dot1, _mm256_set1_ps(scale * sc[2 * r + 1]), acc);
      }
    }
  }
  return hsum(acc);
}

// The K types take one row at a time.
template <float (*Dot)(const uint8_t*, const ActBlock*, int64_t)>
void rows_one_by_one(const uint8_t* w, int64_t row_bytes, int num_rows, const ActBlock* a,
                     int64_t in_features, float* out) {
  for (int r = 0; r < num_rows; ++r) out[r] = Dot(w + r * row_bytes, a, in_features);
}

}  // namespace

void quantize_activation_row(const float* x, int64_t n, ActBlock* out) {
  const __m256 sign_mask = _mm256_set1_ps(-0.f);
  for (int64_t b = 0; b < n / kQk; ++b) {
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(x + b * kQk + 8 * k);
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_mask, v[k]));
    }
    const float max_abs = hmax(amax);
    const __m256 inv = _mm256_set1_ps(max_abs > 0.f ? 32767.f / max_abs : 0.f);
    __m256i q[4];
    for (int k = 0; k < 4; ++k) q[k] = _mm256_cvtps_epi32(_mm256_mul_ps(v[k], inv));  // nearest-even
    ActBlock& a = out[b];
    // packs interleaves 128-bit lanes; the 64-bit permute restores element order.
    for (int h = 0; h < 2; ++h) {
      const __m256i packed = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[2 * h], q[2 * h + 1]), 0xd8);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.qs + 16 * h), packed);
    }
    a.d = max_abs / 32767.f;
    const int sum = hsum_epi32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
    a.d_sum = a.d * static_cast<float>(sum);
  }
}

RowsDotFn int16_rows_dot(DType dtype) {
  switch (dtype) {
    case DType::kQ8_0: return rows_dispatch<Q8_0Rows>;
    case DType::kQ4_1: return rows_dispatch<Q4_1Rows>;
    case DType::kQ4_K: return rows_one_by_one<dot_q4_k>;
    case DType::kQ6_K: return rows_one_by_one<dot_q6_k>;
    default: return nullptr;
  }
}

}  // namespace strata::cpu
