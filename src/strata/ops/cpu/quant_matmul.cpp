#include "strata/ops/cpu/quant_matmul.h"

#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/weights/dequantize.h"
#include "strata/weights/quant_blocks.h"

namespace strata::cpu {

namespace {

// One 32-run of an activation row quantised to int16: x ~= d * qs. 16 bits, not llama.cpp's
// 8: SmolLM2's down_proj inputs carry single channels ~3000x the rest, and an 8-bit step
// (amax / 127) zeroes the small entries of that block; see docs/decisions/0002-int16-activations.md.
struct ActBlock {
  int16_t qs[kQk];
  float d;
  float d_sum;       // d * sum(qs): the minimum term of Q4_1 / Q4_K
};

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

// x: f32 [n], n a multiple of 32; out: [n / 32].
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

// Each dot takes one weight row (in_features / block elements) and one activation row.
float dot_q8_0(const uint8_t* w, const ActBlock* a, int64_t in_features) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < in_features / kQk; ++b) {
    const uint8_t* blk = w + b * sizeof(BlockQ8_0);
    const __m256 dot = dot_block(widen_s8(blk + 2), widen_s8(blk + 18), a[b]);
    acc = _mm256_fmadd_ps(dot, _mm256_set1_ps(half(blk) * a[b].d), acc);
  }
  return hsum(acc);
}

float dot_q4_1(const uint8_t* w, const ActBlock* a, int64_t in_features) {
  const __m256i low_mask = _mm256_set1_epi16(0x0f);
  __m256 acc = _mm256_setzero_ps();
  float min_sum = 0.f;
  for (int64_t b = 0; b < in_features / kQk; ++b) {
    const uint8_t* blk = w + b * sizeof(BlockQ4_1);
    const __m256i bytes = widen_u8(blk + 4);  // low nibbles: elements 0..15, high: 16..31
    const __m256 dot = dot_block(_mm256_and_si256(bytes, low_mask), _mm256_srli_epi16(bytes, 4), a[b]);
    acc = _mm256_fmadd_ps(dot, _mm256_set1_ps(half(blk) * a[b].d), acc);
    min_sum += half(blk + 2) * a[b].d_sum;
  }
  return hsum(acc) + min_sum;
}

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

using DotFn = float (*)(const uint8_t*, const ActBlock*, int64_t);

DotFn int16_dot(DType dtype) {
  switch (dtype) {
    case DType::kQ8_0: return dot_q8_0;
    case DType::kQ4_1: return dot_q4_1;
    case DType::kQ4_K: return dot_q4_k;
    case DType::kQ6_K: return dot_q6_k;
    default: return nullptr;
  }
}

float dot_f32(const float* a, const float* b, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  float sum = hsum(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

void run_int16_path(const QuantMatmulParams& p, DotFn dot, int64_t row_bytes) {
  const int64_t num_blocks = p.in_features / kQk;
  std::vector<ActBlock> act(static_cast<size_t>(p.num_tokens * num_blocks));
  parallel_for(p.num_tokens, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      quantize_activation_row(p.x + t * p.in_features, p.in_features, act.data() + t * num_blocks);
    }
  });
  const auto* w = static_cast<const uint8_t*>(p.w);
  parallel_for(p.out_features, 16, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      for (int64_t t = 0; t < p.num_tokens; ++t) {
        p.y[t * p.out_features + o] = dot(w + o * row_bytes, act.data() + t * num_blocks, p.in_features);
      }
    }
  });
}

void run_dequant_path(const QuantMatmulParams& p, int64_t row_bytes) {
  const auto* w = static_cast<const uint8_t*>(p.w);
  parallel_for(p.out_features, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(p.in_features));
    for (int64_t o = begin; o < end; ++o) {
      dequantize_row(p.w_dtype, w + o * row_bytes, row.data(), p.in_features);
      for (int64_t t = 0; t < p.num_tokens; ++t) {
        p.y[t * p.out_features + o] = dot_f32(row.data(), p.x + t * p.in_features, p.in_features);
      }
    }
  });
}

// Weight rows per dequantised tile: 256 rows of a 4096-wide matrix are 4 MiB of f32.
constexpr int64_t kGemmTileRows = 256;

void run_dequant_gemm_path(const QuantMatmulParams& p, int64_t row_bytes) {
  const auto* w = static_cast<const uint8_t*>(p.w);
  const int64_t tile_rows = std::min(kGemmTileRows, p.out_features);
  std::vector<float> tile(static_cast<size_t>(tile_rows * p.in_features));  // f32 [tile_rows, in]
  for (int64_t first = 0; first < p.out_features; first += tile_rows) {
    const int64_t rows = std::min(tile_rows, p.out_features - first);
    parallel_for(rows, 8, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        dequantize_row(p.w_dtype, w + (first + r) * row_bytes, tile.data() + r * p.in_features, p.in_features);
      }
    });
    // y[:, first:first+rows] = x [tokens, in] * tile^T [in, rows]
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(p.num_tokens),
                static_cast<int>(rows), static_cast<int>(p.in_features), 1.f, p.x,
                static_cast<int>(p.in_features), tile.data(), static_cast<int>(p.in_features), 0.f,
                p.y + first, static_cast<int>(p.out_features));
  }
}

}  // namespace

QuantMatmulPath pick_quant_matmul_path(DType dtype, int64_t num_tokens) {
  if (num_tokens >= kQuantGemmMinTokens) return QuantMatmulPath::kDequantGemm;
  return int16_dot(dtype) ? QuantMatmulPath::kInt16Dot : QuantMatmulPath::kDequantFma;
}

bool quant_matmul_has_int16_path(DType dtype) { return int16_dot(dtype) != nullptr; }

void quant_matmul(const QuantMatmulParams& p) {
  if (!can_dequantize(p.w_dtype)) fail("quant_matmul: weight dtype {} is not supported", dtype_name(p.w_dtype));
  const int64_t block = dtype_block_elems(p.w_dtype);
  if (p.in_features <= 0 || p.in_features % block != 0) {
    fail("quant_matmul: in_features {} is not a positive multiple of the {} block size {}",
         p.in_features, dtype_name(p.w_dtype), block);
  }
  STRATA_CHECK(p.num_tokens >= 0 && p.out_features >= 0);
  if (p.num_tokens == 0 || p.out_features == 0) return;
  STRATA_CHECK(p.x && p.w && p.y);
  const int64_t row_bytes = dtype_bytes(p.w_dtype, p.in_features);
  const QuantMatmulPath path =
      p.path == QuantMatmulPath::kAuto ? pick_quant_matmul_path(p.w_dtype, p.num_tokens) : p.path;
  switch (path) {
    case QuantMatmulPath::kInt16Dot: {
      const DotFn dot = int16_dot(p.w_dtype);
      if (!dot) fail("quant_matmul: no int16 path for weight dtype {}", dtype_name(p.w_dtype));
      return run_int16_path(p, dot, row_bytes);
    }
    case QuantMatmulPath::kDequantGemm: return run_dequant_gemm_path(p, row_bytes);
    default: return run_dequant_path(p, row_bytes);
  }
}

}  // namespace strata::cpu
