// GPU time of the MoE grouped linear at Qwen3-30B-A3B and Qwen3-Next shapes (routing drawn at
// random, k distinct experts per token) and of dense decode linears (Llama-3.1-8B, Qwen3-30B-A3B
// at 1-8 rows): the op's own pick and every kernel forced, timed with CUDA events around the
// kernel only, L2 flushed before each call by reading 256 MB (clean lines, as in a decode step).
// Prints JSON lines with TB/s of weight traffic (decode) and TFLOP/s (prefill).
//   gpu_moe_bench [--tokens 1,8,64,512,4096] [--dense-rows 1,2,4,8] [--iters 20] [--k-quant]
// Dense rows past 8 (--k-quant --dense-rows 16,32,64,128,256) time the quantized GEMM against
// the GEMVs and widening + cuBLASLt.
#include <cstring>
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/ops/expert_linear.h"
#include "strata/ops/linear.h"
#include "strata/ops/moe.h"
#include "strata/weights/quant_blocks.h"
#if defined(STRATA_WITH_CUDA)
#include <cuda_runtime.h>

#include "strata/backend/cuda/cuda_check.h"
#include "strata/ops/cuda/cublaslt_gemm.h"
#include "strata/ops/cuda/fp8_convert.h"
#include "strata/ops/cuda/fp8_gemv.h"
#include "strata/ops/cuda/fp8_mma_gemv.h"
#include "strata/ops/cuda/grouped_gemm.h"
#include "strata/ops/cuda/nibble_quant_mma_gemv.h"
#include "strata/ops/cuda/quant_mma_gemm.h"
#include "strata/ops/cuda/quant_widen.h"
#include "strata/ops/cuda/stream_gemv.h"
#include "strata/ops/cuda/warp_gemv.h"
#endif

namespace strata {
namespace {

struct MoeShape {
  const char* name;
  int64_t experts, top_k, n, k;
};

// gate_up: the fused [E, 2 I, H] product the layer runs; up: one half (the run-1 shape).
const std::vector<MoeShape> kShapes{
    {"qwen3-30b-a3b gate_up", 128, 8, 1536, 2048}, {"qwen3-30b-a3b up", 128, 8, 768, 2048},
    {"qwen3-30b-a3b down", 128, 8, 2048, 768},     {"qwen3-next gate_up", 512, 10, 1024, 2048},
    {"qwen3-next up", 512, 10, 512, 2048},         {"qwen3-next down", 512, 10, 2048, 512}};

struct DenseShape {
  const char* name;
  int64_t n, k;
  DType out_dtype;
};

const std::vector<DenseShape> kDenseShapes{
    {"llama-3.1-8b qkv", 6144, 4096, DType::kBF16},        {"llama-3.1-8b o_proj", 4096, 4096, DType::kBF16},
    {"llama-3.1-8b gate_up", 28672, 4096, DType::kBF16},   {"llama-3.1-8b down", 4096, 14336, DType::kBF16},
    {"llama-3.1-8b lm_head", 128256, 4096, DType::kF32},   {"qwen3-30b-a3b qkv", 5120, 2048, DType::kBF16},
    {"qwen3-30b-a3b o_proj", 2048, 4096, DType::kBF16},    {"qwen3-30b-a3b router", 128, 2048, DType::kF32},
    {"qwen3-30b-a3b lm_head", 151936, 2048, DType::kF32}};

// Offsets [E + 1] of `tokens` tokens each routed to k distinct experts at random.
std::vector<int32_t> random_offsets(int64_t tokens, int64_t top_k, int64_t experts, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> counts(experts, 0), order(experts);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t e = 0; e < experts; ++e) order[e] = static_cast<int32_t>(e);
    for (int64_t j = 0; j < top_k; ++j) {
      std::swap(order[j], order[j + rng() % (experts - j)]);
      ++counts[order[j]];
    }
  }
  std::vector<int32_t> offsets(experts + 1, 0);
  for (int64_t e = 0; e < experts; ++e) offsets[e + 1] = offsets[e] + counts[e];
  return offsets;
}

#if defined(STRATA_WITH_CUDA)
// Random bf16 in [-1/16, 1/16) (xorshift; timing on constants can flatter a kernel).
Tensor random_bf16(Backend& gpu, Shape shape, uint64_t seed) {
  Tensor host = Tensor::host(DType::kBF16, shape);
  uint16_t* v = host.data_as<uint16_t>();
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < host.numel(); ++i) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    const float f = (static_cast<float>(state >> 40) / 16777216.0f - 0.5f) / 8.0f;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    v[i] = static_cast<uint16_t>(bits >> 16);
  }
  return gpu.from_host(host);
}

// The flush reads a [16384, 8192] bf16 matrix (256 MB, past L2) through cuBLASLt: reading
// leaves clean lines, where a memset would leave L2 full of dirty lines to write back.
struct Timer {
  Tensor flush_weight, flush_x, flush_out;  // [16384, 8192], [1, 8192], [1, 16384] bf16
  int iters = 20;
};

void flush_l2(const Timer& timer) {
  cuda::gemm_bf16({.weight = timer.flush_weight.data(), .x = timer.flush_x.data(), .out = timer.flush_out.data(),
                   .m = 1, .n = timer.flush_weight.dim(0), .k = timer.flush_weight.dim(1)},
                  cuda::current_stream());
}

// Median milliseconds of `call` over the iterations, each after an L2 flush.
template <typename Call>
double time_ms(const Timer& timer, Call call) {
  cudaStream_t stream = cuda::current_stream();
  cudaEvent_t start, stop;
  STRATA_CUDA_CHECK(cudaEventCreate(&start));
  STRATA_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> times;
  for (int i = 0; i < timer.iters + 2; ++i) {
    flush_l2(timer);
    STRATA_CUDA_CHECK(cudaEventRecord(start, stream));
    call();
    STRATA_CUDA_CHECK(cudaEventRecord(stop, stream));
    STRATA_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    STRATA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (i >= 2) times.push_back(ms);  // two warm-up calls
  }
  STRATA_CUDA_CHECK(cudaEventDestroy(start));
  STRATA_CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void bench_shape(Backend& gpu, const Timer& timer, const MoeShape& s, const std::vector<int64_t>& token_counts) {
  const Tensor w = gpu.empty(DType::kBF16, {s.experts, s.n, s.k});
  gpu.fill_bytes(w, 0x3C);  // bf16 0x3C3C ~ 0.0115: finite, the values do not matter for timing
  for (const int64_t tokens : token_counts) {
    const int64_t m = tokens * s.top_k;
    const std::vector<int32_t> offsets = random_offsets(tokens, s.top_k, s.experts, 7 + tokens);
    int64_t active = 0;
    for (int64_t e = 0; e < s.experts; ++e) active += offsets[e + 1] > offsets[e] ? 1 : 0;
    Tensor host_offsets = Tensor::host(DType::kI32, {s.experts + 1});
    std::copy(offsets.begin(), offsets.end(), host_offsets.data_as<int32_t>());
    const Tensor goffsets = gpu.from_host(host_offsets), x = gpu.empty(DType::kBF16, {m, s.k});
    const Tensor out = gpu.empty(DType::kBF16, {m, s.n});
    gpu.fill_bytes(x, 0x3C);
    const cuda::GroupedGemmArgs base{.x = x.data(), .weight = w.data(), .offsets = goffsets.data_as<int32_t>(),
                                     .out = out.data(), .out_dtype = DType::kBF16, .num_experts = s.experts,
                                     .m = m, .n = s.n, .k = s.k};
    const double bytes = static_cast<double>(active) * s.n * s.k * 2 + m * (s.k + s.n) * 2.0;
    const double flops = 2.0 * m * s.n * s.k;
    auto report = [&](const std::string& kernel, double ms) {
      std::printf("%s\n", fmt::format(R"({{"shape":"{}","tokens":{},"pairs":{},"active_experts":{},"kernel":"{}",)"
                                      R"("us":{:.1f},"tb_s":{:.2f},"tflop_s":{:.1f}}})",
                                      s.name, tokens, m, active, kernel, ms * 1e3, bytes / (ms * 1e-3) / 1e12,
                                      flops / (ms * 1e-3) / 1e12).c_str());
    };
    report("op", time_ms(timer, [&] { ops::grouped_linear(x, w, goffsets, out); }));
    report("streaming", time_ms(timer, [&] { cuda::grouped_gemv(base, cuda::current_stream()); }));
    if (cuda::bulk_gemv_supported(base))
      report("bulk", time_ms(timer, [&] { cuda::bulk_gemv(base, cuda::current_stream()); }));
    for (const int rows : {32, 64, 128}) {
      for (const bool mma_sync : {false, true}) {
        if (rows == 32 && !mma_sync) continue;  // 32-row tiles run on mma.sync only
        cuda::GroupedGemmArgs args = base;
        args.tile_rows = rows;
        args.mma_sync_tiles = mma_sync;
        report(fmt::format("{}{}", mma_sync ? "mma" : "wgmma", rows),
               time_ms(timer, [&] { cuda::grouped_gemm(args, cuda::current_stream()); }));
      }
    }
  }
}

// Past the GEMVs' rows: the quantized GEMM (its own pick; 32- and 64-row blocks, K splits by
// shape or one) against the GEMVs (to 32 rows, reported by the caller) and the weight widened to
// bf16 for cuBLASLt (where they cross set kQuantGemvMaxRows and kQuantMmaGemmMaxRows).
template <typename Report>
void bench_quant_gemm(Backend& gpu, const Timer& timer, DType dtype, const cuda::QuantGemvArgs& args, Report report) {
  if (args.m <= cuda::kQuantGemvMaxRows) return;
  if (cuda::quant_mma_gemm_supported(dtype, args)) {
    report("gemm", time_ms(timer, [&] { cuda::quant_mma_gemm(dtype, args, cuda::current_stream()); }));
    for (const int tile_rows : {32, 64})
      for (const int splits : {0, 1})
        report(fmt::format("gemm-t{}{}", tile_rows, splits == 1 ? "-s1" : ""), time_ms(timer, [&] {
                 cuda::quant_mma_gemm(dtype, args, cuda::current_stream(), {.k_splits = splits, .tile_rows = tile_rows});
               }));
    if (cuda::quant_mma_gemm_stages_weights(dtype))  // weights through shared memory
      for (const int tile_rows : {32, 64})
        report(fmt::format("gemm-ws-t{}", tile_rows), time_ms(timer, [&] {
                 cuda::quant_mma_gemm(dtype, args, cuda::current_stream(), {.tile_rows = tile_rows, .staged_weights = true});
               }));
  }
  const Tensor widened = gpu.empty(DType::kBF16, {args.n, args.k});
  report("widen+cublaslt", time_ms(timer, [&] {
           cuda::widen_to_bf16(dtype, args.weight, args.n, args.k, widened.data());
           cuda::gemm_bf16({.weight = widened.data(), .x = args.x, .out = args.out, .out_dtype = args.out_dtype,
                            .m = args.m, .n = args.n, .k = args.k},
                           cuda::current_stream());
         }));
}

// Dense decode linears: the op's pick, cuBLASLt, the bulk-copy GEMV and the persistent streaming GEMV;
// the same weights in FP8 through the op and each FP8 GEMV variant (TB/s of the FP8 bytes).
void bench_dense(Backend& gpu, const Timer& timer, const DenseShape& s, const std::vector<int64_t>& row_counts) {
  const Tensor w = random_bf16(gpu, {s.n, s.k}, 11);
  const Tensor w8 = gpu.empty(DType::kF8_E4M3_B128, {s.n, s.k});
  cuda::quantize_bf16_to_fp8_b128(w.data(), s.n, s.k, w8.data());
  for (const int64_t m : row_counts) {
    const Tensor x = random_bf16(gpu, {m, s.k}, 12 + m), out = gpu.empty(s.out_dtype, {m, s.n});
    const cuda::GroupedGemmArgs args{.x = x.data(), .weight = w.data(), .offsets = nullptr, .out = out.data(),
                                     .out_dtype = s.out_dtype, .num_experts = 1, .m = m, .n = s.n, .k = s.k};
    const double bytes = s.n * s.k * 2.0 + m * s.k * 2.0 + m * s.n * static_cast<double>(dtype_bytes(s.out_dtype, 1));
    const double fp8_bytes = bytes - s.n * s.k * 2.0 + static_cast<double>(w8.nbytes());
    auto report = [&](const std::string& kernel, double ms, double moved) {
      std::printf("%s\n", fmt::format(R"({{"shape":"{}","tokens":{},"kernel":"{}","us":{:.1f},"tb_s":{:.2f}}})", s.name,
                                      m, kernel, ms * 1e3, moved / (ms * 1e-3) / 1e12).c_str());
    };
    report("op", time_ms(timer, [&] { ops::linear(x, w, Tensor(), out); }), bytes);
    report("cublaslt", time_ms(timer, [&] {
             cuda::gemm_bf16({.weight = w.data(), .x = x.data(), .out = out.data(), .out_dtype = s.out_dtype,
                              .m = m, .n = s.n, .k = s.k},
                             cuda::current_stream());
           }),
           bytes);
    if (cuda::bulk_gemv_supported(args))
      report("gemv", time_ms(timer, [&] { cuda::bulk_gemv(args, cuda::current_stream()); }), bytes);
    if (cuda::stream_gemv_supported(args))
      report("stream", time_ms(timer, [&] { cuda::stream_gemv(args, cuda::current_stream()); }), bytes);
    const std::pair<const char*, cuda::WarpGemvVariant> variants[] = {
        {"warp-f1u8", cuda::WarpGemvVariant::kRows1Unroll8}, {"warp-f2u4", cuda::WarpGemvVariant::kRows2Unroll4},
        {"warp-f4u2", cuda::WarpGemvVariant::kRows4Unroll2}, {"warp-f2u8", cuda::WarpGemvVariant::kRows2Unroll8},
        {"warp-f1u8w4", cuda::WarpGemvVariant::kRows1Unroll8Warps4}};
    if (cuda::warp_gemv_supported(args))
      for (const auto& [name, variant] : variants)
        report(name, time_ms(timer, [&] { cuda::warp_gemv(args, cuda::current_stream(), variant); }), bytes);
    report("fp8-op", time_ms(timer, [&] { ops::linear(x, w8, Tensor(), out); }), fp8_bytes);
    const cuda::QuantGemvArgs fp8{.x = x.data(), .weight = w8.data(), .out = out.data(), .out_dtype = s.out_dtype,
                                .m = m, .n = s.n, .k = s.k};
    const std::pair<const char*, cuda::Fp8GemvVariant> fp8_variants[] = {
        {"fp8-f2u8", cuda::Fp8GemvVariant::kRows2Unroll8}, {"fp8-f1u16", cuda::Fp8GemvVariant::kRows1Unroll16},
        {"fp8-f4u4", cuda::Fp8GemvVariant::kRows4Unroll4}};
    if (cuda::fp8_gemv_supported(fp8))
      for (const auto& [name, variant] : fp8_variants)
        report(name, time_ms(timer, [&] { cuda::fp8_gemv(fp8, cuda::current_stream(), variant); }), fp8_bytes);
    const std::pair<const char*, cuda::Fp8MmaGemvVariant> mma_variants[] = {
        {"fp8-mma-w8", cuda::Fp8MmaGemvVariant::kWarps8}, {"fp8-mma-w4", cuda::Fp8MmaGemvVariant::kWarps4},
        {"fp8-mma-w2", cuda::Fp8MmaGemvVariant::kWarps2}};
    if (cuda::fp8_mma_gemv_supported(fp8))
      for (const auto& [name, variant] : mma_variants)
        report(name, time_ms(timer, [&] { cuda::fp8_mma_gemv(fp8, cuda::current_stream(), variant); }), fp8_bytes);
    bench_quant_gemm(gpu, timer, DType::kF8_E4M3_B128, fp8,
                     [&](const std::string& kernel, double ms) { report("fp8-" + kernel, ms, fp8_bytes); });
  }
}

// Random GGUF k-quant blocks (every byte pattern is a valid code or packed scale) with f16 block
// scales of 2^-12 .. 2^-9, like real weights; the backend moves them to the device layout.
Tensor random_k_quant(Backend& gpu, DType dtype, Shape shape, uint64_t seed) {
  Tensor q = Tensor::host(dtype, shape);
  auto* bytes = static_cast<uint8_t*>(q.data());
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  for (int64_t i = 0; i < q.nbytes(); ++i) bytes[i] = static_cast<uint8_t>(next());
  const auto scale = [&] { return static_cast<uint16_t>(0x0c00 + next() % 0x1000); };
  for (int64_t b = 0; b < q.numel() / dtype_block_elems(dtype); ++b) {
    if (dtype == DType::kQ4_K) {
      auto& block = static_cast<BlockQ4_K*>(q.data())[b];
      block.d = scale(), block.dmin = scale();
    } else if (dtype == DType::kQ5_K) {
      auto& block = static_cast<BlockQ5_K*>(q.data())[b];
      block.d = scale(), block.dmin = scale();
    } else {
      static_cast<BlockQ6_K*>(q.data())[b].d = scale();
    }
  }
  return gpu.from_host(q);
}

// Dense decode linears on GGUF k-quant weights: the op's pick and the tensor-core GEMV at each
// warp count (TB/s of the quantized bytes).
void bench_k_quant(Backend& gpu, const Timer& timer, const DenseShape& s, const std::vector<int64_t>& row_counts,
                   const std::vector<DType>& dtypes) {
  for (const DType dtype : dtypes) {
    const Tensor w = random_k_quant(gpu, dtype, {s.n, s.k}, 13);
    for (const int64_t m : row_counts) {
      const Tensor x = random_bf16(gpu, {m, s.k}, 12 + m), out = gpu.empty(s.out_dtype, {m, s.n});
      const double bytes = static_cast<double>(w.nbytes()) + m * s.k * 2.0 +
                           m * s.n * static_cast<double>(dtype_bytes(s.out_dtype, 1));
      auto report = [&](const std::string& kernel, double ms) {
        std::printf("%s\n", fmt::format(R"({{"shape":"{}","tokens":{},"kernel":"{}-{}","us":{:.1f},"tb_s":{:.2f}}})",
                                        s.name, m, dtype_name(dtype), kernel, ms * 1e3, bytes / (ms * 1e-3) / 1e12)
                                .c_str());
      };
      report("op", time_ms(timer, [&] { ops::linear(x, w, Tensor(), out); }));
      const cuda::QuantGemvArgs args{.x = x.data(), .weight = w.data(), .out = out.data(), .out_dtype = s.out_dtype,
                                     .m = m, .n = s.n, .k = s.k};
      const std::pair<const char*, cuda::NibbleMmaGemvVariant> variants[] = {
          {"w8", cuda::NibbleMmaGemvVariant::kWarps8}, {"w4", cuda::NibbleMmaGemvVariant::kWarps4},
          {"w2", cuda::NibbleMmaGemvVariant::kWarps2}, {"w8x2", cuda::NibbleMmaGemvVariant::kWarps8TwoBlocks},
          {"w8x2p", cuda::NibbleMmaGemvVariant::kPersistent}};
      if (cuda::nibble_quant_mma_gemv_supported(dtype, args))
        for (const auto& [name, variant] : variants)
          report(name, time_ms(timer, [&] { cuda::nibble_quant_mma_gemv(dtype, args, cuda::current_stream(), variant); }));
      bench_quant_gemm(gpu, timer, dtype, args, report);
    }
  }
}

// MoE experts on k-quant weights at the 30B's gate | up and down shapes (k distinct random
// experts a token, in pair order): the op's launch and each forced one (TB/s of the active experts).
void bench_k_quant_experts(Backend& gpu, const Timer& timer, const std::vector<int64_t>& token_counts) {
  for (const MoeShape& s : {kShapes[0], kShapes[2]}) {
    const int64_t per_x = s.k == 2048 ? s.top_k : 1;  // gate | up reads one x row for a token's k pairs
    for (const DType dtype : {DType::kQ4_K, DType::kQ5_K, DType::kQ6_K}) {
      const Tensor w = random_k_quant(gpu, dtype, {s.experts, s.n, s.k}, 14);
      for (const int64_t tokens : token_counts) {
        const int64_t pairs = tokens * s.top_k;
        const std::vector<int32_t> offsets = random_offsets(tokens, s.top_k, s.experts, 7 + tokens);
        Tensor ids = Tensor::host(DType::kI32, {pairs});
        int64_t active = 0;
        for (int64_t e = 0, i = 0; e < s.experts; ++e) {
          active += offsets[e + 1] > offsets[e] ? 1 : 0;
          for (int32_t j = offsets[e]; j < offsets[e + 1]; ++j) ids.data_as<int32_t>()[i++] = static_cast<int32_t>(e);
        }
        const Tensor gids = gpu.from_host(ids), x = random_bf16(gpu, {pairs / per_x, s.k}, 15 + tokens);
        const Tensor out = gpu.empty(DType::kBF16, {pairs, s.n});
        const double bytes = static_cast<double>(active) * s.n * dtype_bytes(dtype, s.k);
        const cuda::QuantExpertArgs args{.x = x.data(), .weights = w.data(), .expert_ids = gids.data_as<int32_t>(),
                                         .out = out.data(), .num_pairs = pairs, .n = s.n, .k = s.k, .pairs_per_x = per_x};
        if (!cuda::nibble_quant_mma_gemv_experts_supported(dtype, args)) continue;
        const std::pair<const char*, cuda::NibbleMmaGemvVariant> variants[] = {
            {"op", cuda::NibbleMmaGemvVariant::kAuto},          {"w8", cuda::NibbleMmaGemvVariant::kWarps8},
            {"w4", cuda::NibbleMmaGemvVariant::kWarps4},        {"w2", cuda::NibbleMmaGemvVariant::kWarps2},
            {"w8x2", cuda::NibbleMmaGemvVariant::kWarps8TwoBlocks}, {"w8x2p", cuda::NibbleMmaGemvVariant::kPersistent}};
        for (const auto& [name, variant] : variants) {
          const double ms = time_ms(timer, [&] { cuda::nibble_quant_mma_gemv_experts(dtype, args, cuda::current_stream(), variant); });
          std::printf("%s\n", fmt::format(R"({{"shape":"{} experts","tokens":{},"kernel":"{}-{}","us":{:.1f},"tb_s":{:.2f}}})",
                                          s.name, tokens, dtype_name(dtype), name, ms * 1e3, bytes / (ms * 1e-3) / 1e12)
                                  .c_str());
        }
      }
    }
  }
}

// MoE experts on bf16 weights in pair order (the engine's path up to 8 tokens) at the 30B's
// gate | up and down (gated input) shapes: the op's launch shape and each other one.
void bench_bf16_experts(Backend& gpu, const Timer& timer, const std::vector<int64_t>& token_counts) {
  for (const MoeShape& s : {kShapes[0], kShapes[2]}) {
    const bool gate_up = s.k == 2048;  // reads one x row for a token's k pairs; down reads act(gate) * up
    const Tensor w = random_bf16(gpu, {s.experts, s.n, s.k}, 16);
    for (const int64_t tokens : token_counts) {
      const int64_t pairs = tokens * s.top_k;
      std::vector<int32_t> picked(pairs);
      const std::vector<int32_t> offsets = random_offsets(tokens, s.top_k, s.experts, 7 + tokens);
      for (int64_t e = 0, i = 0; e < s.experts; ++e)
        for (int32_t j = offsets[e]; j < offsets[e + 1]; ++j) picked[i++] = static_cast<int32_t>(e);
      Tensor ids = Tensor::host(DType::kI32, {pairs});
      std::copy(picked.begin(), picked.end(), ids.data_as<int32_t>());
      const Tensor gids = gpu.from_host(ids);
      const Tensor x = random_bf16(gpu, {gate_up ? tokens : pairs, gate_up ? s.k : 2 * s.k}, 17 + tokens);
      const Tensor out = gpu.empty(DType::kBF16, {pairs, s.n});
      const double bytes = static_cast<double>(pairs) * s.n * s.k * 2;
      cuda::WarpGemvExpertArgs args{.x = x.data(), .weights = w.data(), .expert_ids = gids.data_as<int32_t>(),
                                    .out = out.data(), .num_pairs = pairs, .num_experts = s.experts, .n = s.n,
                                    .k = s.k, .pairs_per_x = gate_up ? s.top_k : 1};
      if (!gate_up) args.gated_input = ops::Activation::kSilu;
      const std::pair<const char*, cuda::WarpGemvVariant> variants[] = {
          {"op", cuda::WarpGemvVariant::kAuto},         {"f2u3", cuda::WarpGemvVariant::kRows2Unroll3},
          {"f4u3", cuda::WarpGemvVariant::kRows4Unroll3}, {"f2u3w4", cuda::WarpGemvVariant::kRows2Unroll3Warps4},
          {"f1u3w4", cuda::WarpGemvVariant::kRows1Unroll3Warps4}, {"f2u8", cuda::WarpGemvVariant::kRows2Unroll8},
          {"f1u8", cuda::WarpGemvVariant::kRows1Unroll8}};
      for (const auto& [name, variant] : variants) {
        args.variant = variant;
        const double ms = time_ms(timer, [&] { cuda::warp_gemv_experts(args, cuda::current_stream()); });
        std::printf("%s\n", fmt::format(R"({{"shape":"{} experts","tokens":{},"kernel":"bf16-{}","us":{:.1f},"tb_s":{:.2f}}})",
                                        s.name, tokens, name, ms * 1e3, bytes / (ms * 1e-3) / 1e12)
                                .c_str());
      }
    }
  }
}
#endif

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  CLI::App app{"GPU MoE grouped linear benchmark"};
  std::vector<int64_t> tokens{1, 8, 64, 512, 4096}, dense_rows{1, 2, 4, 8};
  int iters = 20;
  bool k_quant_only = false, bf16_experts_only = false;
  std::string shapes, k_quant_types = "q4_k,q5_k,q6_k";
  app.add_option("--tokens", tokens, "token counts (pairs = tokens * top_k)")->delimiter(',');
  app.add_option("--dense-rows", dense_rows, "row counts of the dense linears")->delimiter(',');
  app.add_option("--iters", iters, "timed calls per case (median reported)");
  app.add_flag("--k-quant", k_quant_only, "only the dense linears on GGUF Q4_K / Q5_K / Q6_K weights");
  app.add_flag("--bf16-experts", bf16_experts_only, "only the warp GEMV's launch shapes: bf16 expert pairs (--dense-rows: tokens), the 30B's dense linears");
  app.add_option("--shapes", shapes, "with --k-quant: only the dense shapes whose name holds this (no experts), for profiles");
  app.add_option("--k-quant-types", k_quant_types, "with --k-quant: the GGUF types, comma-separated");
  CLI11_PARSE(app, argc, argv);
#if defined(STRATA_WITH_CUDA)
  std::unique_ptr<strata::Backend> gpu = strata::make_cuda_backend(0);
  if (!gpu) {
    std::fprintf(stderr, "gpu_moe_bench: no CUDA GPU visible\n");
    return 1;
  }
  strata::Timer timer;
  timer.iters = std::max(iters, 1);
  timer.flush_weight = gpu->empty(strata::DType::kBF16, {16384, 8192});
  timer.flush_x = gpu->empty(strata::DType::kBF16, {1, 8192});
  timer.flush_out = gpu->empty(strata::DType::kBF16, {1, 16384});
  gpu->fill_bytes(timer.flush_weight, 0x3C);
  gpu->fill_bytes(timer.flush_x, 0x3C);
  if (bf16_experts_only) {
    strata::bench_bf16_experts(*gpu, timer, dense_rows);
    for (const strata::DenseShape& s : strata::kDenseShapes)
      if (std::string(s.name).starts_with("qwen3")) strata::bench_dense(*gpu, timer, s, {1, 2});
    return 0;
  }
  if (k_quant_only) {
    std::vector<strata::DType> dtypes;
    for (const strata::DType d : {strata::DType::kQ4_K, strata::DType::kQ5_K, strata::DType::kQ6_K}) {
      std::string name(strata::dtype_name(d));
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      if (("," + k_quant_types + ",").find("," + name + ",") != std::string::npos) dtypes.push_back(d);
    }
    if (shapes.empty()) strata::bench_k_quant_experts(*gpu, timer, dense_rows);
    for (const strata::DenseShape& s : strata::kDenseShapes)
      if (std::string(s.name).find(shapes) != std::string::npos) strata::bench_k_quant(*gpu, timer, s, dense_rows, dtypes);
    return 0;
  }
  for (const strata::MoeShape& s : strata::kShapes) strata::bench_shape(*gpu, timer, s, tokens);
  for (const strata::DenseShape& s : strata::kDenseShapes) strata::bench_dense(*gpu, timer, s, dense_rows);
  return 0;
#else
  std::fprintf(stderr, "gpu_moe_bench: built without CUDA\n");
  return 1;
#endif
}
