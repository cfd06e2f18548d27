#include "strata/ops/cpu/convert.h"

#include <immintrin.h>

#include <cstring>

#include "strata/core/error.h"
#include "strata/weights/dequantize.h"

namespace strata::cpu {
namespace {

inline __m256 load_bf16x8(const uint16_t* p) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16));
}

// Eight f32 rounded to bf16 exactly as f32_to_bf16 rounds them (nearest even; NaN quietened).
inline __m128i round_bf16x8(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
  const __m256i is_nan =
      _mm256_cmpgt_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
  const __m256i halves = _mm256_blendv_epi8(rounded, quiet_nan, is_nan);  // each < 0x10000: packs exactly
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(halves, halves), 0x08));
}

inline __m256 load_f16x8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline float hsum(__m256 v) {
  const __m128 lo = _mm256_castps256_ps128(v);
  const __m128 hi = _mm256_extractf128_ps(v, 1);
  __m128 s = _mm_add_ps(lo, hi);
  s = _mm_hadd_ps(s, s);
  s = _mm_hadd_ps(s, s);
  return _mm_cvtss_f32(s);
}

template <typename Load, typename Scalar>
float dot_widen(const float* x, const uint16_t* w, int64_t n, Load load, Scalar scalar) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), load(w + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), load(w + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), load(w + i), acc0);
  float sum = hsum(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) sum += x[i] * scalar(w[i]);
  return sum;
}

inline __m256 load_f32x8(const uint16_t* p) { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }

// Rows stream from memory: fetch the same part of the row kDotRowsF32 * 2 ahead.
constexpr int kPrefetchRows = 2 * kDotRowsF32;

// Elem: stored element bytes (2 or 4); Load widens 8 of them at an element pointer.
template <int R, int Elem, typename Load, typename Scalar>
void dot_rows(const float* x, const uint8_t* w, int64_t row_bytes, int64_t n, float* out, Load load,
              Scalar scalar) {
  __m256 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    for (int r = 0; r < R; ++r) {
      const uint8_t* row = w + r * row_bytes + i * Elem;
      if ((i * Elem) % 64 == 0) _mm_prefetch(reinterpret_cast<const char*>(row + kPrefetchRows * row_bytes), _MM_HINT_T0);
      acc[r] = _mm256_fmadd_ps(xv, load(reinterpret_cast<const uint16_t*>(row)), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    float sum = hsum(acc[r]);
    const auto* row = reinterpret_cast<const uint16_t*>(w + r * row_bytes);
    for (int64_t j = i; j < n; ++j) sum += x[j] * scalar(row, j);
    out[r] = sum;
  }
}

template <int Elem, typename Load, typename Scalar>
void dot_rows_any(const float* x, const uint8_t* w, int64_t row_bytes, int num_rows, int64_t n, float* out,
                  Load load, Scalar scalar) {
  switch (num_rows) {
    case 4: return dot_rows<4, Elem>(x, w, row_bytes, n, out, load, scalar);
    case 3: return dot_rows<3, Elem>(x, w, row_bytes, n, out, load, scalar);
    case 2: return dot_rows<2, Elem>(x, w, row_bytes, n, out, load, scalar);
    default: return dot_rows<1, Elem>(x, w, row_bytes, n, out, load, scalar);
  }
}

}  // namespace

void dot_rows_f32(const float* x, const void* w, DType dtype, int64_t row_bytes, int num_rows, int64_t n,
                  float* out) {
  const auto* bytes = static_cast<const uint8_t*>(w);
  switch (dtype) {
    case DType::kF32:
      return dot_rows_any<4>(x, bytes, row_bytes, num_rows, n, out, load_f32x8, [](const uint16_t* r, int64_t j) {
        return reinterpret_cast<const float*>(r)[j];
      });
    case DType::kBF16:
      return dot_rows_any<2>(x, bytes, row_bytes, num_rows, n, out, load_bf16x8,
                             [](const uint16_t* r, int64_t j) { return bf16_to_f32(r[j]); });
    case DType::kF16:
      return dot_rows_any<2>(x, bytes, row_bytes, num_rows, n, out, load_f16x8,
                             [](const uint16_t* r, int64_t j) { return f16_to_f32(r[j]); });
    default: STRATA_CHECK_MSG(false, "dot_rows_f32 on {}", dtype_name(dtype));
  }
}

void widen_to_f32(const void* src, DType dtype, int64_t n, float* dst) {
  const auto* s16 = static_cast<const uint16_t*>(src);
  switch (dtype) {
    case DType::kF32:
      std::memcpy(dst, src, n * 4);
      return;
    case DType::kBF16: {
      int64_t i = 0;
      for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, load_bf16x8(s16 + i));
      for (; i < n; ++i) dst[i] = bf16_to_f32(s16[i]);
      return;
    }
    case DType::kF16: {
      int64_t i = 0;
      for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, load_f16x8(s16 + i));
      for (; i < n; ++i) dst[i] = f16_to_f32(s16[i]);
      return;
    }
    default:
      STRATA_CHECK_MSG(can_dequantize(dtype), "cannot widen {}", dtype_name(dtype));
      dequantize_row(dtype, src, dst, n);
  }
}

void narrow_from_f32(const float* src, DType dtype, int64_t n, void* dst) {
  auto* d16 = static_cast<uint16_t*>(dst);
  switch (dtype) {
    case DType::kF32: std::memcpy(dst, src, n * 4); return;
    case DType::kBF16: {
      int64_t i = 0;
      for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d16 + i), round_bf16x8(_mm256_loadu_ps(src + i)));
      for (; i < n; ++i) d16[i] = f32_to_bf16(src[i]);
      return;
    }
    case DType::kF16: for (int64_t i = 0; i < n; ++i) d16[i] = f32_to_f16(src[i]); return;
    default: STRATA_CHECK_MSG(false, "cannot narrow to {}", dtype_name(dtype));
  }
}

float dot_f32(const float* x, const void* w, DType dtype, int64_t n) {
  switch (dtype) {
    case DType::kF32: {
      const auto* wf = static_cast<const float*>(w);
      __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
      int64_t i = 0;
      for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(wf + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(wf + i + 8), acc1);
      }
      float sum = hsum(_mm256_add_ps(acc0, acc1));
      for (; i < n; ++i) sum += x[i] * wf[i];
      return sum;
    }
    case DType::kBF16: return dot_widen(x, static_cast<const uint16_t*>(w), n, load_bf16x8, bf16_to_f32);
    case DType::kF16: return dot_widen(x, static_cast<const uint16_t*>(w), n, load_f16x8, f16_to_f32);
    default: STRATA_CHECK_MSG(false, "dot_f32 on {}", dtype_name(dtype));
  }
  return 0;
}

}  // namespace strata::cpu
