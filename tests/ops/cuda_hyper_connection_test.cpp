// The CUDA twins of DeepSeek-V4's mHC ops against the CPU ops on the same random inputs: the
// weights (sigmoid, softmax, Sinkhorn) in f32 to 1e-5, collapse and in-place expand on bf16
// streams (the CPU on the same bf16-rounded values, in f32) and on f32 streams. Every output is
// poisoned first; failures name the op, the shape and the first element out of tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "ops/cuda_op_support.h"
#include "strata/ops/hyper_connection.h"

namespace strata::test {
namespace {

// Every element within tol * (|ref| + RMS(ref)), all finite; then the relative L2 as every CUDA
// op test checks it. The RMS term keeps elements near zero from failing on rounding alone.
void expect_each_close(Backend& gpu, const Tensor& got, const Tensor& ref, double tol, const std::string& what) {
  ASSERT_EQ(got.numel(), ref.numel()) << what;
  const Tensor g = as_f32_host(gpu, got);
  double sum_sq = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) sum_sq += std::pow(static_cast<double>(ref.data_as<float>()[i]), 2);
  const double rms = std::sqrt(sum_sq / static_cast<double>(std::max<int64_t>(1, ref.numel())));
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double x = g.data_as<float>()[i], r = ref.data_as<float>()[i];
    if (!std::isfinite(x) || std::fabs(x - r) > tol * (std::fabs(r) + rms)) {
      ADD_FAILURE() << what << ": element " << i << " of " << ref.numel() << " is " << x << ", the CPU has " << r;
      break;
    }
  }
  expect_close(gpu, got, ref, tol, what);
}

std::string shape_name(int64_t tokens, int64_t n, int64_t hidden) {
  return std::to_string(tokens) + "x" + std::to_string(n) + "x" + std::to_string(hidden);
}

// pre, post [T, n] and a doubly stochastic comb [T, n, n] as the layers make them (CPU weights).
struct Weights {
  Tensor pre, post, comb;
};

Weights cpu_weights(int64_t tokens, int64_t n, uint64_t seed) {
  const Tensor mixes = random_rounded({tokens, (2 + n) * n}, seed, -3.f, 3.f);
  const Tensor base = random_rounded({(2 + n) * n}, seed + 1, -1.f, 1.f);
  const Tensor scale = random_rounded({3}, seed + 2, 0.2f, 1.5f);
  Weights w{Tensor::host(DType::kF32, {tokens, n}), Tensor::host(DType::kF32, {tokens, n}),
            Tensor::host(DType::kF32, {tokens, n, n})};
  ops::hyper_connection_weights(mixes, base, scale, {.num_streams = n, .sinkhorn_iters = 20, .eps = 1e-6f}, w.pre,
                                w.post, w.comb);
  return w;
}

class CudaHyperConnection : public CudaOpTest {};

// 1 token (decode), 37 and 300 (past one block of 128 threads); Sinkhorn of 1 (the column pass
// alone) and 20 sweeps; n up to the CUDA bound.
TEST_F(CudaHyperConnection, WeightsMatchCpu) {
  for (const auto& [tokens, n, iters] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 4, 20}, {37, 3, 20}, {300, 4, 20}, {37, 4, 1}, {9, ops::kCudaMaxHyperStreams, 20}}) {
    const std::string what = "hyper_connection_weights " + std::to_string(tokens) + " tokens, n " +
                             std::to_string(n) + ", " + std::to_string(iters) + " sweeps";
    const int64_t width = (2 + n) * n;
    const Tensor mixes = random_rounded({tokens, width}, 700 + tokens, -3.f, 3.f);
    const Tensor base = random_rounded({width}, 701, -1.f, 1.f);
    const Tensor scale = random_rounded({3}, 702, 0.2f, 1.5f);
    const ops::HyperWeightsOptions options{.num_streams = n, .sinkhorn_iters = iters, .eps = 1e-6f};
    Tensor pre = Tensor::host(DType::kF32, {tokens, n}), post = Tensor::host(DType::kF32, {tokens, n});
    Tensor comb = Tensor::host(DType::kF32, {tokens, n, n});
    ops::hyper_connection_weights(mixes, base, scale, options, pre, post, comb);
    Tensor gpre = poisoned(DType::kF32, {tokens, n}), gpost = poisoned(DType::kF32, {tokens, n});
    Tensor gcomb = poisoned(DType::kF32, {tokens, n, n});
    ops::hyper_connection_weights(gpu_copy(mixes), gpu_copy(base), gpu_copy(scale), options, gpre, gpost, gcomb);
    expect_each_close(*gpu_, gpre, pre, 1e-5, what + " pre");
    expect_each_close(*gpu_, gpost, post, 1e-5, what + " post");
    expect_each_close(*gpu_, gcomb, comb, 1e-5, what + " comb");
  }
}

TEST_F(CudaHyperConnection, HeadWeightsMatchCpu) {
  for (const auto& [tokens, n] : std::vector<std::pair<int64_t, int64_t>>{{1, 4}, {300, 3}, {1000, 4}}) {
    const Tensor mixes = random_rounded({tokens, n}, 710 + n, -3.f, 3.f);
    const Tensor base = random_rounded({n}, 711, -1.f, 1.f), scale = random_rounded({1}, 712, 0.2f, 1.5f);
    Tensor pre = Tensor::host(DType::kF32, {tokens, n});
    ops::hyper_head_weights(mixes, base, scale, 1e-6f, pre);
    Tensor got = poisoned(DType::kF32, {tokens, n});
    ops::hyper_head_weights(gpu_copy(mixes), gpu_copy(base), gpu_copy(scale), 1e-6f, got);
    expect_each_close(*gpu_, got, pre, 1e-5, "hyper_head_weights " + std::to_string(tokens) + "x" + std::to_string(n));
  }
}

// hidden 256 (one block of threads) and 300 (a ragged second block); bf16 streams.
const std::vector<std::tuple<int64_t, int64_t, int64_t>> kStreamShapes = {{1, 4, 256}, {7, 3, 256}, {7, 4, 300},
                                                                          {33, 3, 300}, {5, 8, 300}};

TEST_F(CudaHyperConnection, CollapseMatchesCpu) {
  for (const auto& [tokens, n, hidden] : kStreamShapes) {
    const std::string what = "hyper_collapse " + shape_name(tokens, n, hidden);
    const Tensor streams = random_rounded({tokens, n, hidden}, 720 + n, -3.f, 3.f);
    const Tensor pre = cpu_weights(tokens, n, 721).pre;
    Tensor ref = Tensor::host(DType::kF32, {tokens, hidden});
    ops::hyper_collapse(streams, pre, ref);
    Tensor out = poisoned(DType::kBF16, {tokens, hidden});
    ops::hyper_collapse(gpu_bf16(streams), gpu_copy(pre), out);
    expect_each_close(*gpu_, out, ref, kBf16Tolerance, what + " bf16");
    Tensor out_f32 = poisoned(DType::kF32, {tokens, hidden});
    ops::hyper_collapse(gpu_copy(streams), gpu_copy(pre), out_f32);
    expect_each_close(*gpu_, out_f32, ref, 1e-5, what + " f32");
  }
}

// In place: every output stream reads every input stream of its (t, d).
TEST_F(CudaHyperConnection, ExpandMatchesCpuInPlace) {
  for (const auto& [tokens, n, hidden] : kStreamShapes) {
    const std::string what = "hyper_expand " + shape_name(tokens, n, hidden);
    const Tensor streams0 = random_rounded({tokens, n, hidden}, 730 + n, -3.f, 3.f);
    const Tensor block_out = random_rounded({tokens, hidden}, 731, -2.f, 2.f);
    const Weights w = cpu_weights(tokens, n, 732);
    Tensor ref = host_copy(streams0);
    ops::hyper_expand(ref, block_out, w.post, w.comb);
    const Tensor post = gpu_copy(w.post), comb = gpu_copy(w.comb);
    Tensor got = gpu_bf16(streams0);
    ops::hyper_expand(got, gpu_bf16(block_out), post, comb);
    expect_each_close(*gpu_, got, ref, kBf16Tolerance, what + " bf16");
    Tensor got_f32 = gpu_copy(streams0);
    ops::hyper_expand(got_f32, gpu_copy(block_out), post, comb);
    expect_each_close(*gpu_, got_f32, ref, 1e-5, what + " f32");
  }
}

// More tokens than a grid's 65535 rows: the kernels stride over the rest.
TEST_F(CudaHyperConnection, CollapseAndExpandPastOneGridOfTokens) {
  const int64_t tokens = 65537 + 300, n = 4, hidden = 6;
  const Tensor streams0 = random_rounded({tokens, n, hidden}, 740, -3.f, 3.f);
  const Tensor block_out = random_rounded({tokens, hidden}, 741, -2.f, 2.f);
  const Weights w = cpu_weights(tokens, n, 742);
  Tensor ref_out = Tensor::host(DType::kF32, {tokens, hidden}), ref = host_copy(streams0);
  ops::hyper_collapse(streams0, w.pre, ref_out);
  ops::hyper_expand(ref, block_out, w.post, w.comb);
  Tensor streams = gpu_bf16(streams0), out = poisoned(DType::kBF16, {tokens, hidden});
  ops::hyper_collapse(streams, gpu_copy(w.pre), out);
  ops::hyper_expand(streams, gpu_bf16(block_out), gpu_copy(w.post), gpu_copy(w.comb));
  expect_each_close(*gpu_, out, ref_out, kBf16Tolerance, "hyper_collapse past 65535 tokens");
  expect_each_close(*gpu_, streams, ref, kBf16Tolerance, "hyper_expand past 65535 tokens");
}

}  // namespace
}  // namespace strata::test
