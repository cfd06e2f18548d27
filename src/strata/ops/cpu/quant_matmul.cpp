#include "strata/ops/cpu/quant_matmul.h"

#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/ops/cpu/int16_dot.h"
#include "strata/weights/dequantize.h"
#include "strata/weights/quant_blocks.h"

namespace strata::cpu {

namespace {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
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

void run_int16_path(const QuantMatmulParams& p, RowsDotFn dot, int64_t row_bytes) {
  const int64_t num_blocks = p.in_features / kQk;
  std::vector<ActBlock> act(static_cast<size_t>(p.num_tokens * num_blocks));
  parallel_for(p.num_tokens, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      quantize_activation_row(p.x + t * p.in_features, p.in_features, act.data() + t * num_blocks);
    }
  });
  const auto* w = static_cast<const uint8_t*>(p.w);
  parallel_for(p.out_features, 16, [&](int64_t begin, int64_t end) {
    float out[kDotRows];
    for (int64_t o = begin; o < end; o += kDotRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kDotRows, end - o));
      for (int64_t t = 0; t < p.num_tokens; ++t) {
        dot(w + o * row_bytes, row_bytes, rows, act.data() + t * num_blocks, p.in_features, out);
        for (int r = 0; r < rows; ++r) p.y[t * p.out_features + o + r] = out[r];
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

// Activations as the int16 path sees them (x rounded to d * qs per block of 32), so a row
// gives the same result, up to f32 rounding, whether its batch takes the int16 dots or
// this GEMM: a seeded request samples the same tokens alone or in any batch.
std::vector<float> int16_rounded_activations(const QuantMatmulParams& p) {
  std::vector<float> out(static_cast<size_t>(p.num_tokens * p.in_features));
  const int64_t blocks = p.in_features / kQk;
  parallel_for(p.num_tokens, 1, [&](int64_t begin, int64_t end) {
    std::vector<ActBlock> a(static_cast<size_t>(blocks));
    for (int64_t t = begin; t < end; ++t) {
      quantize_activation_row(p.x + t * p.in_features, p.in_features, a.data());
      float* dst = out.data() + t * p.in_features;
      for (int64_t b = 0; b < blocks; ++b)
        for (int i = 0; i < kQk; ++i) dst[b * kQk + i] = a[b].d * static_cast<float>(a[b].qs[i]);
    }
  });
  return out;
}

void run_dequant_gemm_path(const QuantMatmulParams& p, int64_t row_bytes) {
  const auto* w = static_cast<const uint8_t*>(p.w);
  std::vector<float> rounded;
  const float* x = p.x;
  if (int16_rows_dot(p.w_dtype) != nullptr) {
    rounded = int16_rounded_activations(p);
    x = rounded.data();
  }
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
                static_cast<int>(rows), static_cast<int>(p.in_features), 1.f, x,
                static_cast<int>(p.in_features), tile.data(), static_cast<int>(p.in_features), 0.f,
                p.y + first, static_cast<int>(p.out_features));
  }
}

}  // namespace

QuantMatmulPath pick_quant_matmul_path(DType dtype, int64_t num_tokens) {
  if (num_tokens >= kQuantGemmMinTokens) return QuantMatmulPath::kDequantGemm;
  return int16_rows_dot(dtype) ? QuantMatmulPath::kInt16Dot : QuantMatmulPath::kDequantFma;
}

bool quant_matmul_has_int16_path(DType dtype) { return int16_rows_dot(dtype) != nullptr; }

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
      const RowsDotFn dot = int16_rows_dot(p.w_dtype);
      if (!dot) fail("quant_matmul: no int16 path for weight dtype {}", dtype_name(p.w_dtype));
      return run_int16_path(p, dot, row_bytes);
    }
    case QuantMatmulPath::kDequantGemm: return run_dequant_gemm_path(p, row_bytes);
    default: return run_dequant_path(p, row_bytes);
  }
}

}  // namespace strata::cpu
