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

// One 32-run of an activation row quantised to int8: x ~= d * qs. The sums serve the
// weight types with a minimum (Q4_1, Q4_K) or an offset (Q6_K stores q + 32).
struct ActBlock {
  float d;
  float d_sum;       // d * sum(qs)
  int16_t sums[2];   // sum(qs[0..15]), sum(qs[16..31])
  int8_t qs[kQk];
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
    const float d = max_abs / 127.f;
    const __m256 inv = _mm256_set1_ps(max_abs > 0.f ? 127.f / max_abs : 0.f);
    __m256i q[4];
    for (int k = 0; k < 4; ++k) q[k] = _mm256_cvtps_epi32(_mm256_mul_ps(v[k], inv));  // nearest-even
    // packs interleave 128-bit lanes; the permute restores element order.
    const __m256i q16a = _mm256_packs_epi32(q[0], q[1]);
    const __m256i q16b = _mm256_packs_epi32(q[2], q[3]);
    const __m256i q8 = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(q16a, q16b),
                                                   _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    ActBlock& a = out[b];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.qs), q8);
    int s0 = 0, s1 = 0;
    for (int j = 0; j < 16; ++j) s0 += a.qs[j];
    for (int j = 16; j < 32; ++j) s1 += a.qs[j];
    a.d = d;
    a.sums[0] = static_cast<int16_t>(s0);
    a.sums[1] = static_cast<int16_t>(s1);
    a.d_sum = d * static_cast<float>(s0 + s1);
  }
}

inline __m256i load_act(const ActBlock& a) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.qs));
}

// Sum over 32 pairs of u8 weight quants by s8 activation quants, as 8 int32 lanes.
inline __m256 dot_u8_s8(__m256i wq, __m256i xq) {
  const __m256i pairs = _mm256_maddubs_epi16(wq, xq);
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

// Each dot takes one weight row (in_features / block elements) and one activation row.
float dot_q8_0(const uint8_t* w, const ActBlock* a, int64_t in_features) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < in_features / kQk; ++b) {
    const uint8_t* blk = w + b * sizeof(BlockQ8_0);
    const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
    const __m256i xq = load_act(a[b]);
    // maddubs needs one unsigned operand: move w's sign onto x.
    const __m256 dot = dot_u8_s8(_mm256_sign_epi8(wq, wq), _mm256_sign_epi8(xq, wq));
    acc = _mm256_fmadd_ps(dot, _mm256_set1_ps(half(blk) * a[b].d), acc);
  }
  return hsum(acc);
}

// 16 bytes of nibbles -> 32 bytes: low nibbles (elements 0..15), then high (16..31).
inline __m256i nibbles_32(const uint8_t* qs) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(raw, 4), raw);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0f));
}

float dot_q4_1(const uint8_t* w, const ActBlock* a, int64_t in_features) {
  __m256 acc = _mm256_setzero_ps();
  float min_sum = 0.f;
  for (int64_t b = 0; b < in_features / kQk; ++b) {
    const uint8_t* blk = w + b * sizeof(BlockQ4_1);
    const __m256 dot = dot_u8_s8(nibbles_32(blk + 4), load_act(a[b]));
    acc = _mm256_fmadd_ps(dot, _mm256_set1_ps(half(blk) * a[b].d), acc);
    min_sum += half(blk + 2) * a[b].d_sum;
  }
  return hsum(acc) + min_sum;
}

float dot_q4_k(const uint8_t* w, const ActBlock* a, int64_t in_features) {
  const __m256i low_mask = _mm256_set1_epi8(0x0f);
  __m256 acc = _mm256_setzero_ps();
  float min_sum = 0.f;
  for (int64_t sb = 0; sb < in_features / kQkK; ++sb) {
    const uint8_t* blk = w + sb * sizeof(BlockQ4_K);
    const float d = half(blk), dmin = half(blk + 2);
    const ActBlock* ab = a + sb * (kQkK / kQk);
    for (int c = 0; c < 4; ++c) {
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 16 + 32 * c));
      const __m256i lo = _mm256_and_si256(raw, low_mask);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low_mask);
      uint8_t sc0, m0, sc1, m1;
      unpack_scale_min_k4(2 * c, blk + 4, &sc0, &m0);
      unpack_scale_min_k4(2 * c + 1, blk + 4, &sc1, &m1);
      const ActBlock& a0 = ab[2 * c];
      const ActBlock& a1 = ab[2 * c + 1];
      acc = _mm256_fmadd_ps(dot_u8_s8(lo, load_act(a0)), _mm256_set1_ps(d * sc0 * a0.d), acc);
      acc = _mm256_fmadd_ps(dot_u8_s8(hi, load_act(a1)), _mm256_set1_ps(d * sc1 * a1.d), acc);
      min_sum += dmin * (static_cast<float>(m0) * a0.d_sum + static_cast<float>(m1) * a1.d_sum);
    }
  }
  return hsum(acc) - min_sum;
}

// Q6_K quants are stored as q + 32 in 0..63: the dot uses them unsigned and subtracts
// 32 * scale * sum(x) per 16-run afterwards.
float dot_q6_k(const uint8_t* w, const ActBlock* a, int64_t in_features) {
  const __m256i low_mask = _mm256_set1_epi8(0x0f);
  const __m256i two_bits = _mm256_set1_epi8(3);
  __m256 acc = _mm256_setzero_ps();
  float offset_sum = 0.f;
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
        const __m256i q = _mm256_or_si256(low, _mm256_slli_epi16(top, 4));
        const int s0 = sc[2 * r], s1 = sc[2 * r + 1];
        const __m256i scales = _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(s1)),
                                                _mm_set1_epi16(static_cast<int16_t>(s0)));
        const __m256i pairs = _mm256_maddubs_epi16(q, load_act(ab[r]));
        const __m256 dot = _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, scales));
        const float scale = d * ab[r].d;
        acc = _mm256_fmadd_ps(dot, _mm256_set1_ps(scale), acc);
        offset_sum += scale * static_cast<float>(32 * (s0 * ab[r].sums[0] + s1 * ab[r].sums[1]));
      }
    }
  }
  return hsum(acc) - offset_sum;
}

using DotFn = float (*)(const uint8_t*, const ActBlock*, int64_t);

DotFn int8_dot(DType dtype) {
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

void run_int8_path(const QuantMatmulParams& p, DotFn dot, int64_t row_bytes) {
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
  (void)dtype;  // the int8 path drifts from the dequantised result on real models; off until fixed
  return QuantMatmulPath::kDequantFma;
}

bool quant_matmul_has_int8_path(DType dtype) { return int8_dot(dtype) != nullptr; }

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
    case QuantMatmulPath::kInt8Dot: {
      const DotFn dot = int8_dot(p.w_dtype);
      if (!dot) fail("quant_matmul: no int8 path for weight dtype {}", dtype_name(p.w_dtype));
      return run_int8_path(p, dot, row_bytes);
    }
    case QuantMatmulPath::kDequantGemm: return run_dequant_gemm_path(p, row_bytes);
    default: return run_dequant_path(p, row_bytes);
  }
}

}  // namespace strata::cpu
