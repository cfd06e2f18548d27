// Register-blocked AVX2 kernel behind small_batch_gemm: a block of weight rows x a group of
// tokens keeps its sums in ymm registers, so each 8 stored weights are loaded and widened
// once per token group. Threads split the rows; each thread walks them in L2-sized panels,
// every token group passing over a panel while the last one prefetches the next.
#include "strata/ops/cpu/small_batch_gemm.h"

#include <immintrin.h>

#include <algorithm>

#include "strata/core/error.h"
#include "strata/core/parallel.h"

namespace strata::cpu {
namespace {

// Rows per panel: about this many bytes, so it, the next (prefetched) panel and the tokens
// share a 1.25 MiB L2; 64-128 KiB beat fixed 64-row panels by ~1.2x at in_features 8192.
constexpr int64_t kPanelBytes = 128 << 10;

// Widen 8 stored weights at p to f32. Types, not function pointers, so they inline.
struct LoadF32 {
  __m256 operator()(const uint8_t* p) const { return _mm256_loadu_ps(reinterpret_cast<const float*>(p)); }
  float operator()(const uint8_t* row, int64_t j) const { return reinterpret_cast<const float*>(row)[j]; }
};
struct LoadBf16 {
  __m256 operator()(const uint8_t* p) const {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16));
  }
  float operator()(const uint8_t* row, int64_t j) const {
    return bf16_to_f32(reinterpret_cast<const uint16_t*>(row)[j]);
  }
};
struct LoadF16 {
  __m256 operator()(const uint8_t* p) const {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  float operator()(const uint8_t* row, int64_t j) const {
    return f16_to_f32(reinterpret_cast<const uint16_t*>(row)[j]);
  }
};

// Adds the lanes in dot_rows_f32's order: with the same FMA order along a row, a token's
// result is bit-identical to the per-row dots, whichever kernel its batch size picks.
inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_hadd_ps(s, s);
  s = _mm_hadd_ps(s, s);
  return _mm_cvtss_f32(s);
}

// R rows from w x T tokens from x; result (r, t) goes to y[t * y_stride + r].
struct Block {
  const float* x;           // f32 [T, in]
  const uint8_t* w;         // stored [R, in], rows row_bytes apart
  float* y;
  const uint8_t* prefetch;  // the same rows of the next panel, or w itself
  int64_t in, row_bytes, y_stride;
};

// acc[r][t] += W[r][i, i + 8) * x[t][i, i + 8), each weight vector widened once.
// The loops over rows and tokens must unroll for acc to live in registers; -O2 would not.
template <int Elem, int R, int T, typename Load>
inline void fma_step(const Block& b, int64_t i, __m256 (&acc)[R][T], Load load) {
  __m256 wv[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) wv[r] = load(b.w + r * b.row_bytes + i * Elem);
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    __m256 xv = _mm256_loadu_ps(b.x + t * b.in + i);
    asm("" : "+x"(xv));  // one load per token: GCC would fold a load into every row's FMA
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r][t] = _mm256_fmadd_ps(wv[r], xv, acc[r][t]);
  }
}

template <int Elem, int R, int T, typename Load>
void gemm_block(const Block& b, Load load) {
  constexpr int64_t kLineElems = 64 / Elem;
  __m256 acc[R][T];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  const int64_t n8 = b.in & ~int64_t{7};
  int64_t i = 0;
  for (; i + kLineElems <= n8; i += kLineElems) {  // one cache line of each row per pass
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      _mm_prefetch(reinterpret_cast<const char*>(b.prefetch + r * b.row_bytes + i * Elem), _MM_HINT_T1);
#pragma GCC unroll 8
    for (int64_t u = 0; u < kLineElems; u += 8) fma_step<Elem>(b, i + u, acc, load);
  }
  for (; i < n8; i += 8) fma_step<Elem>(b, i, acc, load);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      float sum = hsum(acc[r][t]);
      for (int64_t j = n8; j < b.in; ++j) sum += b.x[t * b.in + j] * load(b.w + r * b.row_bytes, j);
      b.y[t * b.y_stride + r] = sum;
    }
}

// gemm_block<Elem, R, num_tokens> for num_tokens in [1, T].
template <int Elem, int R, int T, typename Load>
void gemm_block_tokens(int64_t num_tokens, const Block& b, Load load) {
  if constexpr (T > 1) {
    if (num_tokens < T) return gemm_block_tokens<Elem, R, T - 1>(num_tokens, b, load);
  }
  gemm_block<Elem, R, T>(b, load);
}

// Rows [row_begin, row_end) panel by panel in blocks of R rows (R <= 2); within a panel each
// token group (tokens split evenly, <= T each) passes over all rows, the first from memory
// and the rest from L2.
template <int Elem, int R, int T, typename Load>
void gemm_rows(const SmallBatchGemmParams& p, int64_t row_begin, int64_t row_end, Load load) {
  static_assert(R == 1 || R == 2);
  const int64_t in = p.in_features, row_bytes = in * Elem;
  const int64_t panel_rows = std::max<int64_t>(kPanelBytes / row_bytes / R, 1) * R;
  const int64_t num_groups = (p.num_tokens + T - 1) / T;
  const auto* w = static_cast<const uint8_t*>(p.w);
  for (int64_t panel = row_begin; panel < row_end; panel += panel_rows) {
    const int64_t panel_end = std::min(panel + panel_rows, row_end);
    for (int64_t g = 0; g < num_groups; ++g) {
      const int64_t t0 = p.num_tokens * g / num_groups, t1 = p.num_tokens * (g + 1) / num_groups;
      for (int64_t r = panel; r < panel_end; r += R) {
        const int64_t rows = std::min<int64_t>(R, panel_end - r);
        const bool prefetch = g + 1 == num_groups && r + panel_rows + rows <= row_end;
        const Block b{.x = p.x + t0 * in, .w = w + r * row_bytes, .y = p.y + t0 * p.out_features + r,
                      .prefetch = w + (prefetch ? r + panel_rows : r) * row_bytes,
                      .in = in, .row_bytes = row_bytes, .y_stride = p.out_features};
        if (rows == R) {
          gemm_block_tokens<Elem, R, T>(t1 - t0, b, load);
        } else {
          gemm_block_tokens<Elem, 1, T>(t1 - t0, b, load);
        }
      }
    }
  }
}

template <int Elem, int R, int T, typename Load>
void gemm_split(const SmallBatchGemmParams& p, Load load) {
  const int64_t num_blocks = (p.out_features + R - 1) / R;
  parallel_for(num_blocks, 16, [&](int64_t begin, int64_t end) {
    gemm_rows<Elem, R, T>(p, begin * R, std::min(end * R, p.out_features), load);
  });
}

// Blocks of 2 rows x <= 6 tokens: 12 accumulators + 2 weight vectors + 1 token vector of the
// 16 ymm registers. 7 or 8 tokens run as one group of 1-row blocks instead: one pass over
// cold weights beat two passes of 2 rows x 4 tokens by 1.1-1.2x (docs/perf.md).
template <int Elem, typename Load>
void gemm_all(const SmallBatchGemmParams& p, Load load) {
  if (p.num_tokens == 7 || p.num_tokens == 8) return gemm_split<Elem, 1, 8>(p, load);
  gemm_split<Elem, 2, 6>(p, load);
}

}  // namespace

void small_batch_gemm(const SmallBatchGemmParams& p) {
  STRATA_CHECK(p.num_tokens >= 1 && p.in_features >= 1 && p.out_features >= 0);
  switch (p.w_dtype) {
    case DType::kF32: return gemm_all<4>(p, LoadF32{});
    case DType::kBF16: return gemm_all<2>(p, LoadBf16{});
    case DType::kF16: return gemm_all<2>(p, LoadF16{});
    default: STRATA_CHECK_MSG(false, "small_batch_gemm on {}", dtype_name(p.w_dtype));
  }
}

}  // namespace strata::cpu
