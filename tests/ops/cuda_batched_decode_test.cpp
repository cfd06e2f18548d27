// Batched decode (state_slots) of the recurrent ops on CUDA against the CPU op on the same
// random inputs, at Qwen3-Next (conv 8192, nv 32, nk 16, dk = dv = 128), Nemotron-H (conv
// 10240, 128 heads x 64, N 128, 8 groups) and Mamba-2 2.7B (80 heads, 1 group) shapes: rows
// on scattered slots of a larger pool, outputs poisoned first, slots no row names bit-identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "ops/cuda_op_support.h"
#include "strata/ops/causal_conv1d.h"
#include "strata/ops/gated_delta_rule.h"
#include "strata/ops/ssd_scan.h"
#include "test_support.h"

namespace strata::test {
namespace {

using CudaBatchedDecode = CudaOpTest;

// num_rows distinct slots of [0, num_slots), in shuffled order.
Tensor scattered_slots(int64_t num_rows, int64_t num_slots, uint32_t seed) {
  std::vector<int32_t> all(num_slots);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), std::mt19937(seed));
  Tensor slots = Tensor::host(DType::kI32, {num_rows});
  std::copy_n(all.begin(), num_rows, slots.data_as<int32_t>());
  return slots;
}

// Every slot of the device pool that no row names still holds its initial bits.
void expect_untouched_slots(Backend& gpu, const Tensor& pool, const Tensor& pool0, const Tensor& slots,
                            const std::string& what) {
  const Tensor got = gpu.to_host(pool);
  const int64_t slot_bytes = pool0.nbytes() / pool0.dim(0);
  const int32_t* used = slots.data_as<int32_t>();
  for (int32_t s = 0; s < pool0.dim(0); ++s) {
    if (std::find(used, used + slots.numel(), s) != used + slots.numel()) continue;
    EXPECT_EQ(std::memcmp(static_cast<const char*>(got.data()) + s * slot_bytes,
                          static_cast<const char*>(pool0.data()) + s * slot_bytes, slot_bytes), 0)
        << what << ": slot " << s << " was written";
  }
}

TEST_F(CudaBatchedDecode, CausalConv1dMatchesCpu) {
  for (const auto& [rows, channels, bias] : std::vector<std::tuple<int64_t, int64_t, bool>>{
           {1, 8192, false}, {7, 8192, false}, {64, 8192, false}, {33, 10240, true}}) {
    const int64_t kernel = 4, num_slots = rows + 5;
    const Tensor x = random_rounded({rows, channels}, 500, -2.f, 2.f), w = random_rounded({channels, kernel}, 501);
    const Tensor b = bias ? random_rounded({channels}, 502) : Tensor();
    const Tensor pool0 = random_rounded({num_slots, channels, kernel - 1}, 503);
    const Tensor slots = scattered_slots(rows, num_slots, 504);
    Tensor ref = Tensor::host(DType::kF32, {rows, channels}), ref_pool = host_copy(pool0);
    ops::causal_conv1d({.x = x, .weight = w, .bias = b, .conv_state = ref_pool, .out = ref, .state_slots = slots});
    Tensor gx = gpu_bf16(x), pool = gpu_copy(pool0);  // in place, as the layers run it
    ops::causal_conv1d({.x = gx, .weight = gpu_copy(w), .bias = bias ? gpu_copy(b) : Tensor(), .conv_state = pool,
                        .out = gx, .state_slots = gpu_copy(slots)});
    const std::string what = "batched conv1d R=" + std::to_string(rows) + " C=" + std::to_string(channels);
    expect_close(*gpu_, gx, ref, kBf16Tolerance, what + " out");
    expect_close(*gpu_, pool, ref_pool, 1e-6, what + " states");
    expect_untouched_slots(*gpu_, pool, pool0, slots, what);
  }
}

TEST_F(CudaBatchedDecode, GatedDeltaRuleMatchesCpu) {
  struct Case { int64_t rows, nv, nk, dk, dv; };
  for (const Case& c : std::vector<Case>{{1, 32, 16, 128, 128}, {5, 32, 16, 128, 128}, {48, 32, 16, 128, 128},
                                          {9, 4, 2, 64, 64}, {3, 8, 4, 32, 32}}) {
    const int64_t width = 2 * c.nk * c.dk + c.nv * c.dv, num_slots = c.rows + 4;
    const Tensor qkv = random_rounded({c.rows, width}, 510);
    const Tensor a = random_rounded({c.rows, c.nv}, 511, -2.f, 2.f), b = random_rounded({c.rows, c.nv}, 512, -2.f, 2.f);
    const Tensor a_log = random_rounded({c.nv}, 513, -1.f, 0.5f), dt_bias = random_rounded({c.nv}, 514);
    const Tensor pool0 = random_rounded({num_slots, c.nv, c.dk, c.dv}, 515, -0.5f, 0.5f);
    const Tensor slots = scattered_slots(c.rows, num_slots, 516);
    Tensor ref = Tensor::host(DType::kF32, {c.rows, c.nv, c.dv}), ref_pool = host_copy(pool0);
    ops::gated_delta_rule({.qkv = qkv, .a = a, .b = b, .A_log = a_log, .dt_bias = dt_bias, .state = ref_pool,
                           .out = ref, .state_slots = slots});
    Tensor pool = gpu_copy(pool0), out = poisoned(DType::kBF16, {c.rows, c.nv, c.dv});
    ops::gated_delta_rule({.qkv = gpu_bf16(qkv), .a = gpu_bf16(a), .b = gpu_bf16(b), .A_log = gpu_copy(a_log),
                           .dt_bias = gpu_copy(dt_bias), .state = pool, .out = out, .state_slots = gpu_copy(slots)});
    const std::string what = "batched gdn R=" + std::to_string(c.rows) + " dk=" + std::to_string(c.dk);
    expect_close(*gpu_, out, ref, kBf16Tolerance, what + " out");
    expect_close(*gpu_, pool, ref_pool, 1e-4, what + " states");
    expect_untouched_slots(*gpu_, pool, pool0, slots, what);
  }
}

TEST_F(CudaBatchedDecode, SsdScanMatchesCpu) {
  struct Case { int64_t rows, nh, hd, n, groups; };
  for (const Case& c : std::vector<Case>{{1, 128, 64, 128, 8}, {6, 128, 64, 128, 8}, {40, 80, 64, 128, 1},
                                          {5, 8, 32, 16, 2}}) {
    const int64_t width = c.nh * c.hd + 2 * c.groups * c.n, num_slots = c.rows + 3;
    const Tensor xbc = random_rounded({c.rows, width}, 520), dt = random_rounded({c.rows, c.nh}, 521, -3.f, 1.f);
    const Tensor dt_bias = random_rounded({c.nh}, 522), a_log = random_rounded({c.nh}, 523, -1.f, 1.f);
    const Tensor d = random_rounded({c.nh}, 524);
    const Tensor pool0 = random_rounded({num_slots, c.nh, c.hd, c.n}, 525, -0.5f, 0.5f);
    const Tensor slots = scattered_slots(c.rows, num_slots, 526);
    const ops::SsdScanOptions options{.n_groups = c.groups, .dt_min = 0.001f, .dt_max = 5.0f};
    Tensor ref = Tensor::host(DType::kF32, {c.rows, c.nh, c.hd}), ref_pool = host_copy(pool0);
    ops::ssd_scan({.xbc = xbc, .dt = dt, .dt_bias = dt_bias, .A_log = a_log, .D = d, .state = ref_pool, .y = ref,
                   .state_slots = slots}, options);
    Tensor pool = gpu_copy(pool0), y = poisoned(DType::kBF16, {c.rows, c.nh, c.hd});
    ops::ssd_scan({.xbc = gpu_bf16(xbc), .dt = gpu_bf16(dt), .dt_bias = gpu_copy(dt_bias), .A_log = gpu_copy(a_log),
                   .D = gpu_copy(d), .state = pool, .y = y, .state_slots = gpu_copy(slots)}, options);
    const std::string what = "batched ssd R=" + std::to_string(c.rows) + " nh=" + std::to_string(c.nh);
    expect_close(*gpu_, y, ref, kBf16Tolerance, what + " y");
    expect_close(*gpu_, pool, ref_pool, 1e-4, what + " states");
    expect_untouched_slots(*gpu_, pool, pool0, slots, what);
  }
}

// A slot out of range leaves its row's output and every state as they were (the kernel
// cannot report it); the other rows run.
TEST_F(CudaBatchedDecode, SlotOutOfRangeRowIsSkipped) {
  const int64_t nv = 4, nk = 2, dk = 32, dv = 32, num_slots = 3, width = 2 * nk * dk + nv * dv;
  const Tensor qkv = random_rounded({2, width}, 530), ab = random_rounded({2, nv}, 531);
  const Tensor a_log = random_rounded({nv}, 532, -1.f, 0.5f), dt_bias = random_rounded({nv}, 533);
  const Tensor pool0 = random_rounded({num_slots, nv, dk, dv}, 534, -0.5f, 0.5f);
  Tensor good = Tensor::host(DType::kI32, {1});
  good.data_as<int32_t>()[0] = 2;
  Tensor ref = Tensor::host(DType::kF32, {1, nv, dv}), ref_pool = host_copy(pool0);
  ops::gated_delta_rule({.qkv = qkv.slice_rows(0, 1), .a = ab.slice_rows(0, 1), .b = ab.slice_rows(0, 1),
                         .A_log = a_log, .dt_bias = dt_bias, .state = ref_pool, .out = ref, .state_slots = good});
  Tensor slots = Tensor::host(DType::kI32, {2});
  slots.data_as<int32_t>()[0] = 2;
  slots.data_as<int32_t>()[1] = num_slots;
  Tensor pool = gpu_copy(pool0), out = poisoned(DType::kBF16, {2, nv, dv});
  ops::gated_delta_rule({.qkv = gpu_bf16(qkv), .a = gpu_bf16(ab), .b = gpu_bf16(ab), .A_log = gpu_copy(a_log),
                         .dt_bias = gpu_copy(dt_bias), .state = pool, .out = out, .state_slots = gpu_copy(slots)});
  expect_close(*gpu_, out.slice_rows(0, 1), ref, kBf16Tolerance, "row on slot 2");
  expect_close(*gpu_, pool, ref_pool, 1e-4, "states");
  const Tensor skipped = as_f32_host(*gpu_, out.slice_rows(1, 2));
  for (int64_t i = 0; i < skipped.numel(); ++i) ASSERT_TRUE(std::isnan(skipped.data_as<float>()[i])) << i;
}

}  // namespace
}  // namespace strata::test
