// GPU time of the recurrent-layer scans over one prefill segment, recurrent form against
// chunked form, timed with CUDA events on the ops' stream: the gated delta rule at the
// Qwen3-Next shape (nv 32, nk 16, dk = dv = 128) and the Mamba-2 SSD scan at the Nemotron-H
// shape (nh 128, hd 64, N 128, 8 groups); bf16 activations, f32 states. One JSON line per
// (op, form, tokens).
//   gpu_gdn_bench [--tokens 1024,4096] [--reps 20]
#include <algorithm>
#include <cstdio>
#include <functional>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/core/dtype.h"
#include "strata/core/error.h"
#include "strata/ops/gated_delta_rule.h"
#include "strata/ops/ssd_scan.h"

#if defined(STRATA_WITH_CUDA)
#include "strata/backend/cuda/cuda_check.h"
#endif

namespace strata {
namespace {

constexpr int64_t kNv = 32, kNk = 16, kDk = 128, kDv = 128;            // gated delta rule
constexpr int64_t kNh = 128, kHd = 64, kN = 128, kGroups = 8;            // SSD

struct BenchOptions {
  std::vector<int64_t> tokens{1024, 4096};
  int reps = 20;
};

BenchOptions parse_args(int argc, char** argv) {
  BenchOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) fail("{} needs a value", a);
    const std::string v = argv[++i];
    if (a == "--reps") {
      o.reps = std::stoi(v);
    } else if (a == "--tokens") {
      o.tokens.clear();
      for (size_t start = 0; start < v.size();) {
        const size_t end = std::min(v.find(',', start), v.size());
        o.tokens.push_back(std::stoll(v.substr(start, end - start)));
        start = end + 1;
      }
    } else {
      fail("unknown flag {} (--tokens LIST, --reps N)", a);
    }
  }
  return o;
}

#if defined(STRATA_WITH_CUDA)
// Host tensor uniform in [lo, hi) from a fixed LCG, as bf16 (activations) or f32.
Tensor random_host(DType dtype, Shape shape, uint64_t seed, float lo, float hi) {
  Tensor t = Tensor::host(dtype, shape);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const float v = lo + (hi - lo) * static_cast<float>(x >> 40) / 16777216.0f;
    if (dtype == DType::kBF16) {
      t.data_as<uint16_t>()[i] = f32_to_bf16(v);
    } else {
      t.data_as<float>()[i] = v;
    }
  }
  return t;
}

// Mean milliseconds of one call, after one warm-up call.
double time_ms(const std::function<void()>& call, int reps) {
  call();
  cudaEvent_t start, stop;
  STRATA_CUDA_CHECK(cudaEventCreate(&start));
  STRATA_CUDA_CHECK(cudaEventCreate(&stop));
  STRATA_CUDA_CHECK(cudaEventRecord(start, cuda::current_stream()));
  for (int i = 0; i < reps; ++i) call();
  STRATA_CUDA_CHECK(cudaEventRecord(stop, cuda::current_stream()));
  STRATA_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0.0f;
  STRATA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  STRATA_CUDA_CHECK(cudaEventDestroy(start));
  STRATA_CUDA_CHECK(cudaEventDestroy(stop));
  return ms / reps;
}

double time_gdn(Backend& gpu, int64_t tokens, bool chunked, int reps) {
  const int64_t width = 2 * kNk * kDk + kNv * kDv;
  const ops::GatedDeltaRuleArgs args{
      .qkv = gpu.from_host(random_host(DType::kBF16, {tokens, width}, 1, -1.f, 1.f)),
      .a = gpu.from_host(random_host(DType::kBF16, {tokens, kNv}, 2, -3.f, 3.f)),
      .b = gpu.from_host(random_host(DType::kBF16, {tokens, kNv}, 3, -3.f, 3.f)),
      .A_log = gpu.from_host(random_host(DType::kF32, {kNv}, 4, -2.f, 1.f)),
      .dt_bias = gpu.from_host(random_host(DType::kF32, {kNv}, 5, -1.f, 1.f)),
      .state = gpu.from_host(random_host(DType::kF32, {kNv, kDk, kDv}, 6, -0.5f, 0.5f)),
      .out = gpu.empty(DType::kBF16, {tokens, kNv, kDv})};
  const auto form = chunked ? ops::GatedDeltaRuleForm::kChunked : ops::GatedDeltaRuleForm::kRecurrent;
  return time_ms([&] { cuda::gated_delta_rule(args, form); }, reps);
}

double time_ssd(Backend& gpu, int64_t tokens, bool chunked, int reps) {
  const int64_t width = kNh * kHd + 2 * kGroups * kN;
  const ops::SsdScanArgs args{
      .xbc = gpu.from_host(random_host(DType::kBF16, {tokens, width}, 11, -1.f, 1.f)),
      .dt = gpu.from_host(random_host(DType::kBF16, {tokens, kNh}, 12, -3.f, 1.f)),
      .dt_bias = gpu.from_host(random_host(DType::kF32, {kNh}, 13, -1.f, 1.f)),
      .A_log = gpu.from_host(random_host(DType::kF32, {kNh}, 14, -1.f, 1.f)),
      .D = gpu.from_host(random_host(DType::kF32, {kNh}, 15, -1.f, 1.f)),
      .state = gpu.from_host(random_host(DType::kF32, {kNh, kHd, kN}, 16, -0.5f, 0.5f)),
      .y = gpu.empty(DType::kBF16, {tokens, kNh, kHd})};
  const ops::SsdScanOptions options{.n_groups = kGroups, .dt_min = 0.001f, .dt_max = 5.0f};
  const auto form = chunked ? ops::SsdScanForm::kChunked : ops::SsdScanForm::kRecurrent;
  return time_ms([&] { cuda::ssd_scan(args, options, form); }, reps);
}

int run(const BenchOptions& o) {
  std::unique_ptr<Backend> gpu = make_cuda_backend(0);
  if (!gpu) {
    std::fprintf(stderr, "gpu_gdn_bench: no CUDA GPU visible\n");
    return 1;
  }
  using TimeFn = double (*)(Backend&, int64_t, bool, int);
  for (const auto& [op, time_fn] : {std::pair<const char*, TimeFn>{"gated_delta_rule", time_gdn},
                                    std::pair<const char*, TimeFn>{"ssd_scan", time_ssd}}) {
    for (const int64_t tokens : o.tokens) {
      const double recurrent_ms = time_fn(*gpu, tokens, false, o.reps);
      const double chunked_ms = time_fn(*gpu, tokens, true, o.reps);
      for (const bool chunked : {false, true}) {
        const double ms = chunked ? chunked_ms : recurrent_ms;
        std::printf("{\"bench\": \"%s\", \"form\": \"%s\", \"tokens\": %lld, \"ms\": %.4f, "
                    "\"us_per_token\": %.4f, \"speedup\": %.2f}\n",
                    op, chunked ? "chunked" : "recurrent", static_cast<long long>(tokens), ms,
                    1e3 * ms / static_cast<double>(tokens), recurrent_ms / ms);
      }
    }
  }
  return 0;
}
#else
int run(const BenchOptions&) {
  std::fprintf(stderr, "gpu_gdn_bench: built without CUDA\n");
  return 1;
}
#endif

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  try {
    return strata::run(strata::parse_args(argc, argv));
  } catch (const strata::Error& e) {
    std::fprintf(stderr, "gpu_gdn_bench: %s\n", e.what());
    return 1;
  }
}
