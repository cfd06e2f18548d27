// The chunked CUDA Mamba-2 SSD scan (prefill rows) against the CPU op on the same random
// bf16-rounded inputs, from a random carried state, at Mamba-2 / Nemotron-H shapes and the
// fixture shape, for full, partial and many chunks; and which form a CUDA segment takes.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "ops/cuda_op_support.h"
#include "test_support.h"
#include "strata/ops/ssd_scan.h"

namespace strata::test {
namespace {

using CudaSsdChunked = CudaOpTest;
using ops::SsdScanForm;

struct SsdShape {
  int64_t nh, hd, n, groups;
  float dt_min, dt_max;
};
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr SsdShape kNemotronH{128, 64, 128, 8, 0.001f, 5.0f};
constexpr SsdShape kMamba2{80, 64, 128, 1, 0.0f, kInf};
constexpr SsdShape kFixture{8, 32, 16, 1, 0.0f, kInf};

TEST(CudaSsdChunkedForm, LongPrefillRowsChunkShortAndVerifyRowsRecur) {
  using ops::ssd_scan_cuda_form;
  EXPECT_EQ(ssd_scan_cuda_form(63, 64, 128, false), SsdScanForm::kRecurrent);
  EXPECT_EQ(ssd_scan_cuda_form(1, 64, 128, false), SsdScanForm::kRecurrent);
  EXPECT_EQ(ssd_scan_cuda_form(64, 64, 128, false), SsdScanForm::kChunked);
  EXPECT_EQ(ssd_scan_cuda_form(4096, 32, 16, false), SsdScanForm::kChunked);
  EXPECT_EQ(ssd_scan_cuda_form(4096, 64, 256, false), SsdScanForm::kChunked);
  EXPECT_EQ(ssd_scan_cuda_form(4096, 64, 128, true), SsdScanForm::kRecurrent);
  EXPECT_EQ(ssd_scan_cuda_form(4096, 64, 8, false), SsdScanForm::kRecurrent);
  EXPECT_EQ(ssd_scan_cuda_form(4096, 64, 96, false), SsdScanForm::kRecurrent);
  EXPECT_EQ(ssd_scan_cuda_form(4096, 48, 128, false), SsdScanForm::kRecurrent);
}

struct SsdInputs {
  Tensor xbc, dt, dt_bias, a_log, d, state0;  // f32 host, bf16-rounded
};

SsdInputs random_inputs(const SsdShape& s, int64_t tokens, uint64_t seed) {
  const int64_t width = s.nh * s.hd + 2 * s.groups * s.n;
  return {.xbc = random_rounded({tokens, width}, seed, -1.f, 1.f),
          .dt = random_rounded({tokens, s.nh}, seed + 1, -3.f, 1.f),
          .dt_bias = random_rounded({s.nh}, seed + 2, -1.f, 1.f),
          .a_log = random_rounded({s.nh}, seed + 3, -1.f, 1.f),
          .d = random_rounded({s.nh}, seed + 4, -1.f, 1.f),
          .state0 = random_rounded({s.nh, s.hd, s.n}, seed + 5, -0.5f, 0.5f)};
}

ops::SsdScanOptions options_for(const SsdShape& s) {
  return {.n_groups = s.groups, .dt_min = s.dt_min, .dt_max = s.dt_max, .chunk_size = 256};
}

// CPU op (f32) and CUDA op (bf16 activations, f32 state) on one random segment.
void check_against_cpu(Backend& gpu, const SsdShape& s, int64_t tokens, uint64_t seed) {
  const SsdInputs in = random_inputs(s, tokens, seed);
  Tensor ref = Tensor::host(DType::kF32, {tokens, s.nh, s.hd}), ref_state = host_copy(in.state0);
  ops::ssd_scan({.xbc = in.xbc, .dt = in.dt, .dt_bias = in.dt_bias, .A_log = in.a_log, .D = in.d,
                 .state = ref_state, .y = ref}, options_for(s));
  Tensor state = gpu.from_host(in.state0);
  Tensor y = gpu.empty(DType::kBF16, {tokens, s.nh, s.hd});
  gpu.fill_bytes(y, 0xFF);
  ops::ssd_scan({.xbc = gpu.from_host(to_bf16_host(in.xbc)), .dt = gpu.from_host(to_bf16_host(in.dt)),
                 .dt_bias = gpu.from_host(in.dt_bias), .A_log = gpu.from_host(in.a_log),
                 .D = gpu.from_host(in.d), .state = state, .y = y}, options_for(s));
  const std::string what = "ssd T=" + std::to_string(tokens) + " nh=" + std::to_string(s.nh) +
                           " N=" + std::to_string(s.n);
  expect_close(gpu, y, ref, kBf16Tolerance, what + " y");
  expect_close(gpu, state, ref_state, 1e-3, what + " state");
}

TEST_F(CudaSsdChunked, MambaShapesMatchCpu) {
  for (const SsdShape& s : {kNemotronH, kMamba2}) {
    for (const int64_t tokens : {64, 65, 200, 1000, 4096}) {
      ASSERT_EQ(ops::ssd_scan_cuda_form(tokens, s.hd, s.n, false), SsdScanForm::kChunked);
      check_against_cpu(*gpu_, s, tokens, 900 + static_cast<uint64_t>(tokens));
    }
  }
}

TEST_F(CudaSsdChunked, FixtureShapeMatchesCpu) {
  for (const int64_t tokens : {64, 65, 127, 200, 1000, 4096}) {
    ASSERT_EQ(ops::ssd_scan_cuda_form(tokens, kFixture.hd, kFixture.n, false), SsdScanForm::kChunked);
    check_against_cpu(*gpu_, kFixture, tokens, 1000 + static_cast<uint64_t>(tokens));
  }
}

TEST_F(CudaSsdChunked, ShortRowsTakeTheRecurrentFormAndMatchCpu) {
  for (const int64_t tokens : {1, 17, 63}) {
    for (const SsdShape& s : {kNemotronH, kFixture}) {
      ASSERT_EQ(ops::ssd_scan_cuda_form(tokens, s.hd, s.n, false), SsdScanForm::kRecurrent);
      check_against_cpu(*gpu_, s, tokens, 1100 + static_cast<uint64_t>(tokens));
    }
  }
}

TEST_F(CudaSsdChunked, SplitSegmentsCarryTheStateLikeOneSegment) {
  // A prefill split into a chunked segment then a partial one ends where the whole one does.
  const SsdShape s = kFixture;
  const int64_t tokens = 300, split = 192;
  const SsdInputs in = random_inputs(s, tokens, 1200);
  Tensor ref = Tensor::host(DType::kF32, {tokens, s.nh, s.hd}), ref_state = host_copy(in.state0);
  ops::ssd_scan({.xbc = in.xbc, .dt = in.dt, .dt_bias = in.dt_bias, .A_log = in.a_log, .D = in.d,
                 .state = ref_state, .y = ref}, options_for(s));
  const Tensor xbc = gpu_bf16(in.xbc), dt = gpu_bf16(in.dt), dt_bias = gpu_copy(in.dt_bias);
  const Tensor a_log = gpu_copy(in.a_log), d = gpu_copy(in.d);
  Tensor state = gpu_copy(in.state0), y = poisoned(DType::kBF16, {tokens, s.nh, s.hd});
  for (const auto& [begin, end] : std::vector<std::pair<int64_t, int64_t>>{{0, split}, {split, tokens}}) {
    ops::ssd_scan({.xbc = xbc.slice_rows(begin, end), .dt = dt.slice_rows(begin, end), .dt_bias = dt_bias,
                   .A_log = a_log, .D = d, .state = state, .y = y.slice_rows(begin, end)}, options_for(s));
  }
  expect_close(*gpu_, y, ref, kBf16Tolerance, "split y");
  expect_close(*gpu_, state, ref_state, 1e-3, "split state");
}

}  // namespace
}  // namespace strata::test
