// CPU op timings at SmolLM2-135M shapes: the bf16 linear layer (AVX2 dots for 1 token, the
// register-blocked small-batch kernel for 2-16, widened tiles + sgemm above) for 1-64 tokens,
// its two multi-token kernels head to head on cold weights (the crossover), and paged
// attention of one decode token over 1k keys. Threads: the last argument of each case.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "strata/core/parallel.h"
#include "strata/ops/cpu/convert.h"
#include "strata/ops/cpu/small_batch_gemm.h"
#include "strata/ops/linear.h"
#include "strata/ops/paged_attention.h"

namespace {

using strata::DType;
using strata::Tensor;

Tensor filled(DType dtype, strata::Shape shape, float value) {
  Tensor t = Tensor::host(dtype, shape);
  if (dtype == DType::kBF16) {
    const uint16_t v = strata::f32_to_bf16(value);
    std::fill_n(t.data_as<uint16_t>(), t.numel(), v);
  } else {
    std::fill_n(t.data_as<float>(), t.numel(), value);
  }
  return t;
}

// args: out_features, in_features, tokens, threads
void BM_LinearBf16(benchmark::State& state) {
  const int64_t out = state.range(0), in = state.range(1), tokens = state.range(2);
  strata::set_num_threads(static_cast<int>(state.range(3)));
  const Tensor w = filled(DType::kBF16, {out, in}, 0.01f);  // bf16 [out, in]
  const Tensor x = filled(DType::kF32, {tokens, in}, 0.5f);  // f32 [tokens, in]
  const Tensor y = Tensor::host(DType::kF32, {tokens, out});  // f32 [tokens, out]
  for (auto _ : state) {
    strata::cpu::linear(x, w, Tensor(), y);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * out * in * tokens * state.iterations() / 1e9,
                                                 benchmark::Counter::kIsRate);
  state.counters["weight_GB/s"] = benchmark::Counter(2.0 * out * in * state.iterations() / 1e9,
                                                     benchmark::Counter::kIsRate);
}

void linear_shapes(benchmark::internal::Benchmark* b) {
  // q/o proj 576x576, k/v 192x576, gate/up 1536x576, down 576x1536, lm_head 49152x576.
  const int64_t shapes[][2] = {{576, 576}, {192, 576}, {1536, 576}, {576, 1536}, {49152, 576}};
  for (int64_t threads : {1, 2})
    for (int64_t tokens : {1, 4, 5, 8, 16, 32, 64})
      for (const auto& s : shapes) b->Args({s[0], s[1], tokens, threads});
}

// Crossover of linear's two multi-token bf16 kernels: small_batch_gemm against 64-row tiles
// widened to f32 for sgemm (linear's path above kSmallBatchMaxTokens), on weights as cold as
// decode's: each iteration reads the next of several copies (256 MiB in all).
void widened_tiles_sgemm(const float* x, const uint16_t* w, float* y, int64_t tokens, int64_t out, int64_t in) {
  strata::parallel_for((out + 63) / 64, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> tile(64 * in);
    for (int64_t r0 = begin * 64; r0 < std::min(end * 64, out); r0 += 64) {
      const int64_t n = std::min<int64_t>(64, out - r0);
      for (int64_t r = 0; r < n; ++r)
        strata::cpu::widen_to_f32(w + (r0 + r) * in, DType::kBF16, in, tile.data() + r * in);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(tokens), static_cast<int>(n),
                  static_cast<int>(in), 1.f, x, static_cast<int>(in), tile.data(), static_cast<int>(in), 0.f, y + r0,
                  static_cast<int>(out));
    }
  });
}

// args: kernel (0 small_batch_gemm, 1 widened tiles + sgemm), out_features, in_features, tokens, threads
void BM_LinearCrossoverBf16(benchmark::State& state) {
  const int64_t out = state.range(1), in = state.range(2), tokens = state.range(3);
  strata::set_num_threads(static_cast<int>(state.range(4)));
  openblas_set_num_threads(1);
  const int64_t num_copies = std::max<int64_t>(2, (int64_t{256} << 20) / (out * in * 2));
  const std::vector<uint16_t> w(num_copies * out * in, strata::f32_to_bf16(0.01f));  // bf16 [copies, out, in]
  const std::vector<float> x(tokens * in, 0.5f);                                      // f32 [tokens, in]
  std::vector<float> y(tokens * out);                                                 // f32 [tokens, out]
  int64_t copy = 0;
  for (auto _ : state) {
    const uint16_t* wc = w.data() + (copy++ % num_copies) * out * in;
    if (state.range(0) == 0) {
      strata::cpu::small_batch_gemm({.x = x.data(), .w = wc, .y = y.data(), .w_dtype = DType::kBF16,
                                     .num_tokens = tokens, .in_features = in, .out_features = out});
    } else {
      widened_tiles_sgemm(x.data(), wc, y.data(), tokens, out, in);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetLabel(state.range(0) == 0 ? "small_batch_gemm" : "widened tiles + sgemm");
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * out * in * tokens * state.iterations() / 1e9,
                                                 benchmark::Counter::kIsRate);
}

void crossover_shapes(benchmark::internal::Benchmark* b) {
  const int64_t shapes[][2] = {{576, 576}, {1536, 576}, {576, 1536}};
  for (int64_t tokens : {8, 16, 24, 32, 48, 64})
    for (const auto& s : shapes)
      for (int64_t kernel : {0, 1}) b->Args({kernel, s[0], s[1], tokens, 2});
}

// One decode token per head group of SmolLM2 (9 query heads, 3 KV heads, head_dim 64) over
// `context` keys in 16-token blocks. args: context, threads
void BM_PagedAttentionDecode(benchmark::State& state) {
  const int64_t context = state.range(0), block_size = 16, heads = 9, kv_heads = 3, head_dim = 64;
  strata::set_num_threads(static_cast<int>(state.range(1)));
  const int64_t num_blocks = (context + block_size - 1) / block_size;
  const Tensor k_cache = filled(DType::kF32, {num_blocks, block_size, kv_heads, head_dim}, 0.01f);
  const Tensor v_cache = filled(DType::kF32, {num_blocks, block_size, kv_heads, head_dim}, 0.02f);
  const Tensor q = filled(DType::kF32, {1, heads, head_dim}, 0.1f);
  const Tensor out = Tensor::host(DType::kF32, {1, heads, head_dim});
  Tensor cu = Tensor::host(DType::kI32, {2}), kv_lens = Tensor::host(DType::kI32, {1});
  Tensor tables = Tensor::host(DType::kI32, {1, num_blocks});
  cu.data_as<int32_t>()[0] = 0;
  cu.data_as<int32_t>()[1] = 1;
  kv_lens.data_as<int32_t>()[0] = static_cast<int32_t>(context);
  std::iota(tables.data_as<int32_t>(), tables.data_as<int32_t>() + num_blocks, 0);
  const strata::ops::AttentionMetadata meta{.cu_seqlens = cu, .kv_lens = kv_lens, .block_tables = tables,
                                            .num_rows = 1, .max_q_len = 1, .max_kv_len = context};
  for (auto _ : state) {
    strata::cpu::paged_attention(q, k_cache, v_cache, meta, {.scale = 0.125f}, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["kv_GB/s"] = benchmark::Counter(2.0 * context * kv_heads * head_dim * 4 * state.iterations() / 1e9,
                                                 benchmark::Counter::kIsRate);
}

// Lab for docs/decisions/0001-cpu-gemm.md: f32 y[T, N] = x[T, K] * w[N, K]^T on one thread,
// by OpenBLAS sgemm, by one AVX2 dot per (token, row), and by a 4x4 register-blocked AVX2
// kernel (4 tokens x 4 rows per pass, 16 accumulators). K a multiple of 8; T, N of 4.
float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_hadd_ps(s, s);
  s = _mm_hadd_ps(s, s);
  return _mm_cvtss_f32(s);
}

void gemm_dot(const float* x, const float* w, float* y, int64_t t_n, int64_t n, int64_t k) {
  for (int64_t t = 0; t < t_n; ++t)
    for (int64_t o = 0; o < n; ++o) {
      __m256 acc = _mm256_setzero_ps();
      for (int64_t i = 0; i < k; i += 8)
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(x + t * k + i), _mm256_loadu_ps(w + o * k + i), acc);
      y[t * n + o] = hsum8(acc);
    }
}

void gemm_4x4(const float* x, const float* w, float* y, int64_t t_n, int64_t n, int64_t k) {
  for (int64_t o = 0; o < n; o += 4)
    for (int64_t t = 0; t < t_n; t += 4) {
      __m256 acc[4][4];
      for (auto& row : acc)
        for (__m256& a : row) a = _mm256_setzero_ps();
      for (int64_t i = 0; i < k; i += 8) {
        __m256 wv[4];
        for (int r = 0; r < 4; ++r) wv[r] = _mm256_loadu_ps(w + (o + r) * k + i);
        for (int j = 0; j < 4; ++j) {
          const __m256 xv = _mm256_loadu_ps(x + (t + j) * k + i);
          for (int r = 0; r < 4; ++r) acc[j][r] = _mm256_fmadd_ps(xv, wv[r], acc[j][r]);
        }
      }
      for (int j = 0; j < 4; ++j)
        for (int r = 0; r < 4; ++r) y[(t + j) * n + o + r] = hsum8(acc[j][r]);
    }
}

// args: variant (0 sgemm, 1 dot, 2 4x4), N, K, T
void BM_GemmLab(benchmark::State& state) {
  const int64_t n = state.range(1), k = state.range(2), t_n = state.range(3);
  const Tensor w = filled(DType::kF32, {n, k}, 0.01f), x = filled(DType::kF32, {t_n, k}, 0.5f);
  Tensor y = Tensor::host(DType::kF32, {t_n, n});
  openblas_set_num_threads(1);
  for (auto _ : state) {
    if (state.range(0) == 0) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(t_n), static_cast<int>(n),
                  static_cast<int>(k), 1.f, x.data_as<float>(), static_cast<int>(k), w.data_as<float>(),
                  static_cast<int>(k), 0.f, y.data_as<float>(), static_cast<int>(n));
    } else if (state.range(0) == 1) {
      gemm_dot(x.data_as<float>(), w.data_as<float>(), y.data_as<float>(), t_n, n, k);
    } else {
      gemm_4x4(x.data_as<float>(), w.data_as<float>(), y.data_as<float>(), t_n, n, k);
    }
    benchmark::DoNotOptimize(y.data());
  }
  static const char* names[] = {"openblas sgemm", "avx2 dot per (t,o)", "avx2 4x4 blocked"};
  state.SetLabel(names[state.range(0)]);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * k * t_n * state.iterations() / 1e9,
                                                 benchmark::Counter::kIsRate);
}

void gemm_lab_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t t_n : {8, 64, 256})
    for (int64_t variant : {0, 1, 2}) b->Args({variant, 1536, 576, t_n});
}

BENCHMARK(BM_GemmLab)->Apply(gemm_lab_shapes)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LinearBf16)->Apply(linear_shapes)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_LinearCrossoverBf16)->Apply(crossover_shapes)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_PagedAttentionDecode)->Args({1024, 1})->Args({1024, 2})->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
