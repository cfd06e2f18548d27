// quant_matmul at SmolLM2-135M shapes (hidden 576, intermediate 1536): the int8-dot path
// against the dequantise+FMA path, for decode (1 token) and a small prefill chunk.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstring>
#include <random>
#include <vector>

#include "strata/core/parallel.h"
#include "strata/ops/cpu/quant_matmul.h"

namespace {

using strata::DType;
using strata::cpu::QuantMatmulPath;

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

// args: dtype, out, in, tokens, path (0 auto, 1 dequant), threads
void BM_QuantMatmul(benchmark::State& state) {
  const auto dtype = static_cast<DType>(state.range(0));
  const int64_t out = state.range(1), in = state.range(2), tokens = state.range(3);
  strata::set_num_threads(static_cast<int>(state.range(5)));
  const std::vector<uint8_t> w = random_weights(dtype, out, in);
  std::vector<float> x(tokens * in, 0.5f), y(tokens * out);
  const strata::cpu::QuantMatmulParams p{
      .x = x.data(), .w = w.data(), .y = y.data(), .w_dtype = dtype, .num_tokens = tokens,
      .in_features = in, .out_features = out,
      .path = state.range(4) ? QuantMatmulPath::kDequantFma : QuantMatmulPath::kAuto};
  for (auto _ : state) {
    strata::cpu::quant_matmul(p);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetLabel(fmt::format("{} {}x{} t={} {} threads={}", strata::dtype_name(dtype), out, in, tokens,
                             state.range(4) ? "dequant+fma" : "int8-dot", state.range(5)));
  state.counters["weight_GB/s"] = benchmark::Counter(
      static_cast<double>(w.size()) * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

void shapes(benchmark::internal::Benchmark* b) {
  const int64_t threads = 1;
  for (DType dtype : {DType::kQ8_0, DType::kQ4_1, DType::kQ4_K, DType::kQ6_K}) {
    const bool k_quant = dtype == DType::kQ4_K || dtype == DType::kQ6_K;
    for (int64_t tokens : {1, 16}) {
      for (int64_t path : {0, 1}) {
        if (!k_quant) b->Args({static_cast<int64_t>(dtype), 1536, 576, tokens, path, threads});
        b->Args({static_cast<int64_t>(dtype), 576, 1536, tokens, path, threads});
      }
    }
  }
}

BENCHMARK(BM_QuantMatmul)->Apply(shapes)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
