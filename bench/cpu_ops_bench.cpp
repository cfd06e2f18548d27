// CPU op timings at SmolLM2-135M shapes: the bf16 linear layer (AVX2 dots for <= 4 tokens,
// widened tiles + sgemm above) for 1, 8 and 64 tokens, and paged attention of one decode
// token over 1k keys. Threads: the last argument of each case.
#include <benchmark/benchmark.h>

#include <numeric>
#include <vector>

#include "strata/core/parallel.h"
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
    for (int64_t tokens : {1, 8, 64})
      for (const auto& s : shapes) b->Args({s[0], s[1], tokens, threads});
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

BENCHMARK(BM_LinearBf16)->Apply(linear_shapes)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_PagedAttentionDecode)->Args({1024, 1})->Args({1024, 2})->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
