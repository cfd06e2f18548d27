// quant_matmul at SmolLM2-135M shapes (hidden 576, intermediate 1536): int16-dot, dequantise+FMA
// and dequantise+sgemm paths, for decode (1 token) and prefill chunks (16-64 tokens).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <immintrin.h>

#include <cstring>
#include <random>
#include <vector>

#include "strata/core/parallel.h"
#include "strata/ops/cpu/quant_matmul.h"

namespace {

using strata::DType;
using strata::cpu::QuantMatmulPath;

constexpr const char* kPathNames[] = {"auto", "int16-dot", "dequant+fma", "dequant+sgemm"};

// Random quant bytes with every f16 field (block scales/mins) set to a small sane value.
std::vector<uint8_t> random_weights(DType dtype, int64_t out, int64_t in) {
  std::mt19937 rng(1);
  const int64_t num_blocks = out * in / strata::dtype_block_elems(dtype);
  const int64_t block_bytes = strata::dtype_block_bytes(dtype);
  std::vector<uint8_t> w(static_cast<size_t>(num_blocks * block_bytes));
  for (uint8_t& b : w) b = static_cast<uint8_t>(rng());
  const uint16_t small = strata::f32_to_f16(0.01f);
  const int scale_at = dtype == DType::kQ6_K ? 208 : 0;
  for (int64_t b = 0; b < num_blocks; ++b) {
    std::memcpy(&w[b * block_bytes + scale_at], &small, 2);
    if (dtype == DType::kQ4_1 || dtype == DType::kQ4_K) std::memcpy(&w[b * block_bytes + 2], &small, 2);
  }
  return w;
}

// args: dtype, out, in, tokens, path (QuantMatmulPath), threads
void BM_QuantMatmul(benchmark::State& state) {
  const auto dtype = static_cast<DType>(state.range(0));
  const int64_t out = state.range(1), in = state.range(2), tokens = state.range(3);
  strata::set_num_threads(static_cast<int>(state.range(5)));
  const std::vector<uint8_t> w = random_weights(dtype, out, in);
  std::vector<float> x(tokens * in, 0.5f), y(tokens * out);
  const strata::cpu::QuantMatmulParams p{
      .x = x.data(), .w = w.data(), .y = y.data(), .w_dtype = dtype, .num_tokens = tokens,
      .in_features = in, .out_features = out,
      .path = static_cast<QuantMatmulPath>(state.range(4))};
  for (auto _ : state) {
    strata::cpu::quant_matmul(p);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetLabel(fmt::format("{} {}x{} t={} {} threads={}", strata::dtype_name(dtype), out, in, tokens,
                             kPathNames[state.range(4)], state.range(5)));
  state.counters["weight_GB/s"] = benchmark::Counter(
      static_cast<double>(w.size()) * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

void shapes(benchmark::internal::Benchmark* b) {
  const int64_t threads = 1;
  for (DType dtype : {DType::kQ8_0, DType::kQ4_1, DType::kQ4_K, DType::kQ6_K}) {
    const bool k_quant = dtype == DType::kQ4_K || dtype == DType::kQ6_K;
    for (int64_t tokens : {1, 16, 32, 64}) {
      for (int64_t path : {1, 2, 3}) {
        if (!k_quant) b->Args({static_cast<int64_t>(dtype), 1536, 576, tokens, path, threads});
        b->Args({static_cast<int64_t>(dtype), 576, 1536, tokens, path, threads});
      }
    }
  }
}

// Lab variant: Q4_1 decode that dequantises each block into registers and FMAs with f32
// activations (no activation quantisation). Kept here only to compare against the int16 path.
void q4_1_register_fma(const uint8_t* w, const float* x, float* y, int64_t out, int64_t in) {
  const int64_t row_bytes = in / 32 * 20;
  strata::parallel_for(out, 16, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      __m256 acc = _mm256_setzero_ps();
      for (int64_t b = 0; b < in / 32; ++b) {
        const uint8_t* blk = w + o * row_bytes + b * 20;
        uint16_t dh, mh;
        std::memcpy(&dh, blk, 2);
        std::memcpy(&mh, blk + 2, 2);
        const __m256 d = _mm256_set1_ps(_cvtsh_ss(dh)), m = _mm256_set1_ps(_cvtsh_ss(mh));
        const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 4));
        const __m128i lo = _mm_and_si128(raw, _mm_set1_epi8(0x0f));
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(raw, 4), _mm_set1_epi8(0x0f));
        const __m128i parts[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
        for (int k = 0; k < 4; ++k) {
          const __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(parts[k]));
          acc = _mm256_fmadd_ps(_mm256_fmadd_ps(q, d, m), _mm256_loadu_ps(x + b * 32 + 8 * k), acc);
        }
      }
      __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
      s = _mm_hadd_ps(s, s);
      s = _mm_hadd_ps(s, s);
      y[o] = _mm_cvtss_f32(s);
    }
  });
}

// args: out, in, threads
void BM_Q4_1RegisterFma(benchmark::State& state) {
  const int64_t out = state.range(0), in = state.range(1);
  strata::set_num_threads(static_cast<int>(state.range(2)));
  const std::vector<uint8_t> w = random_weights(DType::kQ4_1, out, in);
  std::vector<float> x(in, 0.5f), y(out);
  for (auto _ : state) {
    q4_1_register_fma(w.data(), x.data(), y.data(), out, in);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetLabel(fmt::format("q4_1 {}x{} t=1 register-dequant+fma", out, in));
}

// Decode as the model sees it: 64 distinct 1536x576 matrices (35 MB of Q4_1, 49 MB of Q8_0)
// in turn, so the weights stream from memory instead of sitting in L2.
// args: dtype, threads
void BM_QuantMatmulStream(benchmark::State& state) {
  const auto dtype = static_cast<DType>(state.range(0));
  constexpr int64_t kMatrices = 64, out = 1536, in = 576;
  strata::set_num_threads(static_cast<int>(state.range(1)));
  const std::vector<uint8_t> w = random_weights(dtype, out * kMatrices, in);
  const int64_t matrix_bytes = static_cast<int64_t>(w.size()) / kMatrices;
  std::vector<float> x(in, 0.5f), y(out);
  int64_t m = 0;
  for (auto _ : state) {
    strata::cpu::quant_matmul({.x = x.data(), .w = w.data() + m * matrix_bytes, .y = y.data(),
                               .w_dtype = dtype, .num_tokens = 1, .in_features = in, .out_features = out});
    benchmark::DoNotOptimize(y.data());
    m = (m + 1) % kMatrices;
  }
  state.SetLabel(fmt::format("{} 64 x {}x{} t=1 threads={}", strata::dtype_name(dtype), out, in, state.range(1)));
  state.counters["weight_GB/s"] = benchmark::Counter(
      static_cast<double>(matrix_bytes) * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

BENCHMARK(BM_QuantMatmulStream)
    ->Args({static_cast<int64_t>(DType::kQ4_1), 1})->Args({static_cast<int64_t>(DType::kQ4_1), 2})
    ->Args({static_cast<int64_t>(DType::kQ8_0), 1})->Args({static_cast<int64_t>(DType::kQ8_0), 2})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Q4_1RegisterFma)->Args({1536, 576, 1})->Args({576, 1536, 1})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_QuantMatmul)->Apply(shapes)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
