// The CUDA MoE kernels against the CPU ops at Qwen3-30B-A3B and Qwen3-Next shapes: grouped
// linears for 1 to 32768 (token, expert) rows with skewed routing (empty experts, one expert
// holding most rows) through the op's pick and through every kernel variant, bf16 and f32
// outputs poisoned first; gate and up fused per expert ([E, 2 I, H]) then the gated activation;
// grouping exact on large inputs; the combine; the kernel pick itself; the decode path in pair
// order (expert_linear, the combine without a permutation, and both in one kernel).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ops/cuda_op_support.h"
#include "strata/core/parallel.h"
#include "strata/ops/activation.h"
#include "strata/ops/expert_linear.h"
#include "strata/ops/moe.h"
#if defined(STRATA_WITH_CUDA)
#include "strata/backend/cuda/cuda_check.h"
#include "strata/ops/cuda/grouped_gemm.h"
#endif

namespace strata::test {
namespace {

using CudaMoe = CudaOpTest;

uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Host bf16 tensor uniform in [-scale, scale): built directly, the expert weights are large.
Tensor random_bf16(Shape shape, uint64_t seed, float scale) {
  Tensor t = Tensor::host(DType::kBF16, shape);
  uint16_t* p = t.data_as<uint16_t>();
  parallel_for(t.numel(), 1 << 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float u = static_cast<float>(mix(seed * 0x9E3779B97F4A7C15ull + i) >> 40) / 16777216.0f;
      p[i] = f32_to_bf16(scale * (2.0f * u - 1.0f));
    }
  });
  return t;
}

// Offsets [E + 1] for m rows: about 60% on one hot expert, the rest spread over the experts
// e % 3 != 1 (so a third of the experts, and more when m is small, own no rows).
Tensor skewed_offsets(int64_t m, int64_t experts, uint64_t seed) {
  std::vector<int32_t> counts(experts, 0);
  const int64_t hot = experts / 3, hot_rows = m >= 8 ? m * 6 / 10 : 0;
  counts[hot] = static_cast<int32_t>(hot_rows);
  for (int64_t i = hot_rows; i < m; ++i) {
    int64_t e = static_cast<int64_t>(mix(seed + i) % experts);
    if (e % 3 == 1) e = (e + 1) % experts;
    ++counts[e];
  }
  std::vector<int32_t> offsets(experts + 1, 0);
  for (int64_t e = 0; e < experts; ++e) offsets[e + 1] = offsets[e] + counts[e];
  return int_tensor(offsets);
}

struct LinearShape {
  const char* name;
  int64_t experts, n, k;
};

// Qwen3-30B-A3B (128 experts, hidden 2048, moe_intermediate 768) and Qwen3-Next (512
// experts, moe_intermediate 512): the gate/up product and the down product of each.
const std::vector<LinearShape> kModelShapes{{"qwen3-30b up", 128, 768, 2048}, {"qwen3-30b down", 128, 2048, 768},
                                            {"qwen3-next up", 512, 512, 2048}, {"qwen3-next down", 512, 2048, 512}};

TEST_F(CudaMoe, GroupedLinearMatchesCpuAtModelShapes) {
  for (const LinearShape& s : kModelShapes) {
    const Tensor w = random_bf16({s.experts, s.n, s.k}, 500 + s.n, 0.05f);
    const Tensor gw = gpu_copy(w);
    for (const int64_t m : {1, 8, 80, 640, 4096 * 8}) {
      const Tensor x = random_rounded({m, s.k}, 510 + m), offsets = skewed_offsets(m, s.experts, 520 + m);
      Tensor ref = Tensor::host(DType::kF32, {m, s.n});
      ops::grouped_linear(x, w, offsets, ref);
      const Tensor gx = gpu_bf16(x), goffsets = gpu_copy(offsets);
      for (const DType out_dtype : {DType::kBF16, DType::kF32}) {
        Tensor out = poisoned(out_dtype, {m, s.n});
        ops::grouped_linear(gx, gw, goffsets, out);
        expect_close(*gpu_, out, ref, kBf16Tolerance,
                     std::string(s.name) + " m=" + std::to_string(m) + " " + std::string(dtype_name(out_dtype)));
      }
    }
  }
}

// [E, 2 I, H]: expert e's gate rows then its up rows, as MoeFfn stacks them on accelerators.
Tensor fuse_gate_up(const Tensor& gate, const Tensor& up) {
  const int64_t experts = gate.dim(0), inter = gate.dim(1), hidden = gate.dim(2);
  Tensor fused = Tensor::host(DType::kBF16, {experts, 2 * inter, hidden});
  const int64_t part_bytes = inter * hidden * 2;
  for (int64_t e = 0; e < experts; ++e) {
    char* dst = static_cast<char*>(fused.data()) + 2 * e * part_bytes;
    std::memcpy(dst, static_cast<const char*>(gate.data()) + e * part_bytes, part_bytes);
    std::memcpy(dst + part_bytes, static_cast<const char*>(up.data()) + e * part_bytes, part_bytes);
  }
  return fused;
}

// The fused path of MoeFfn on CUDA (one grouped linear into [M, 2 I], gated_activation_halves)
// against the CPU's separate gate and up products, at Qwen3-30B-A3B expert dimensions.
TEST_F(CudaMoe, FusedGateUpMatchesSeparateProducts) {
  const int64_t experts = 16, inter = 768, hidden = 2048;
  const Tensor gate_w = random_bf16({experts, inter, hidden}, 560, 0.05f);
  const Tensor up_w = random_bf16({experts, inter, hidden}, 561, 0.05f);
  const Tensor gfused = gpu_copy(fuse_gate_up(gate_w, up_w));
  for (const int64_t m : {1, 8, 80, 4096}) {
    const Tensor x = random_rounded({m, hidden}, 562 + m), offsets = skewed_offsets(m, experts, 563 + m);
    Tensor gate = Tensor::host(DType::kF32, {m, inter}), up = Tensor::host(DType::kF32, {m, inter});
    ops::grouped_linear(x, gate_w, offsets, gate);
    ops::grouped_linear(x, up_w, offsets, up);
    ops::gated_activation(gate, up, up, ops::Activation::kSilu);
    Tensor gate_up = poisoned(DType::kBF16, {m, 2 * inter}), out = poisoned(DType::kBF16, {m, inter});
    ops::grouped_linear(gpu_bf16(x), gfused, gpu_copy(offsets), gate_up);
    ops::gated_activation_halves(gate_up, out, ops::Activation::kSilu);
    expect_close(*gpu_, out, up, kBf16Tolerance, "fused gate_up m=" + std::to_string(m));
  }
}

#if defined(STRATA_WITH_CUDA)
// Each kernel on its own, whatever the op would pick: tensor tiles of 32, 64 and 128 rows (64
// and 128 on wgmma and on mma.sync) and both streaming kernels (registers, bulk copy), at few
// and many rows per expert, with N a multiple of the 128-column block and not.
TEST_F(CudaMoe, EveryGroupedKernelVariantMatchesCpu) {
  for (const LinearShape& s : {LinearShape{"variants", 64, 384, 1024}, LinearShape{"column tail", 16, 200, 512}}) {
    const Tensor w = random_bf16({s.experts, s.n, s.k}, 530, 0.05f);
    const Tensor gw = gpu_copy(w);
    for (const int64_t m : {3, 100, 2000}) {
      const Tensor x = random_rounded({m, s.k}, 531 + m), offsets = skewed_offsets(m, s.experts, 532 + m);
      Tensor ref = Tensor::host(DType::kF32, {m, s.n});
      ops::grouped_linear(x, w, offsets, ref);
      const Tensor gx = gpu_bf16(x), goffsets = gpu_copy(offsets);
      // -1: bulk copy, 0: register streaming; 64 and 128 twice: wgmma, then mma.sync.
      const std::vector<std::pair<int, bool>> kernels{{-1, false}, {0, false},  {32, false}, {64, false},
                                                      {128, false}, {64, true}, {128, true}};
      for (const auto& [tile_rows, mma_sync] : kernels) {
        Tensor out = poisoned(DType::kF32, {m, s.n});
        const cuda::GroupedGemmArgs args{.x = gx.data(), .weight = gw.data(), .offsets = goffsets.data_as<int32_t>(),
                                         .out = out.data(), .out_dtype = DType::kF32, .num_experts = s.experts,
                                         .m = m, .n = s.n, .k = s.k, .tile_rows = tile_rows > 0 ? tile_rows : 0,
                                         .mma_sync_tiles = mma_sync};
        if (tile_rows == -1) {
          cuda::bulk_gemv(args, cuda::current_stream());
        } else if (tile_rows == 0) {
          cuda::grouped_gemv(args, cuda::current_stream());
        } else {
          cuda::grouped_gemm(args, cuda::current_stream());
        }
        const std::string kernel = tile_rows == -1  ? "bulk"
                                   : tile_rows == 0 ? "streaming"
                                                    : std::string(mma_sync || tile_rows == 32 ? "mma.sync" : "wgmma") +
                                                          " tile_rows=" + std::to_string(tile_rows);
        expect_close(*gpu_, out, ref, kBf16Tolerance, std::string(s.name) + " " + kernel + " m=" + std::to_string(m));
      }
    }
  }
}

TEST(CudaMoeDispatch, PicksStreamingForFewRowsAndTensorCoresForMany) {
  const int32_t offsets[4] = {};  // only its address is looked at
  cuda::GroupedGemmArgs args{.x = nullptr, .weight = nullptr, .offsets = offsets, .out = nullptr,
                             .num_experts = 128, .m = 8, .n = 768, .k = 2048};
  EXPECT_EQ(cuda::grouped_kernel_for(args), cuda::GroupedKernel::kBulkStreaming);
  args.m = 128;
  EXPECT_EQ(cuda::grouped_kernel_for(args), cuda::GroupedKernel::kBulkStreaming);
  args.m = 129;
  EXPECT_EQ(cuda::grouped_kernel_for(args), cuda::GroupedKernel::kTensorCores);
  EXPECT_EQ(cuda::grouped_gemm_tile_rows(args), 32);
  args.m = 32768;
  EXPECT_EQ(cuda::grouped_gemm_tile_rows(args), 128);
  args.num_experts = 512;  // 64 rows an expert
  EXPECT_EQ(cuda::grouped_gemm_tile_rows(args), 128);
  args.m = 16384;
  EXPECT_EQ(cuda::grouped_gemm_tile_rows(args), 64);
  args.k = 2056;  // not a multiple of 64: tensor tiles refuse, streaming takes it
  EXPECT_EQ(cuda::grouped_kernel_for(args), cuda::GroupedKernel::kBulkStreaming);
  args.k = 16392;  // weight rows past the bulk kernel's 32 KB stage: register streaming
  EXPECT_EQ(cuda::grouped_kernel_for(args), cuda::GroupedKernel::kStreaming);
  args.k = 2050;  // not a multiple of 8: nothing takes it
  EXPECT_EQ(cuda::grouped_kernel_for(args), cuda::GroupedKernel::kNone);
}
#endif

void expect_exact_i32(Backend& gpu, const Tensor& got, const Tensor& ref, const std::string& what) {
  const Tensor h = gpu.to_host(got);
  ASSERT_EQ(h.numel(), ref.numel()) << what;
  EXPECT_EQ(std::memcmp(h.data(), ref.data(), ref.nbytes()), 0) << what;
}

// Random top-k ids with a skew: every third choice goes to one hot expert.
Tensor skewed_ids(int64_t tokens, int64_t k, int64_t experts, uint64_t seed) {
  Tensor ids = Tensor::host(DType::kI32, {tokens, k});
  for (int64_t i = 0; i < tokens * k; ++i)
    ids.data_as<int32_t>()[i] = static_cast<int32_t>(i % 3 == 0 ? experts / 2 : mix(seed + i) % experts);
  return ids;
}

TEST_F(CudaMoe, GroupExactAndCombineOnLargeInputs) {
  for (const auto& [tokens, k, experts] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 8, 128}, {4096, 8, 128}, {4096, 10, 512}, {8192, 8, 128}, {5, 2, 8}}) {
    const int64_t pairs = tokens * k, hidden = 2048;
    const Tensor ids = skewed_ids(tokens, k, experts, 540 + tokens);
    const ops::MoeGroups groups{.sorted_pairs = Tensor::host(DType::kI32, {pairs}),
                                .token_rows = Tensor::host(DType::kI32, {pairs}),
                                .expert_offsets = Tensor::host(DType::kI32, {experts + 1})};
    ops::moe_group(ids, groups);
    const ops::MoeGroups ggroups{.sorted_pairs = poisoned(DType::kI32, {pairs}),
                                 .token_rows = poisoned(DType::kI32, {pairs}),
                                 .expert_offsets = poisoned(DType::kI32, {experts + 1})};
    ops::moe_group(gpu_copy(ids), ggroups);
    const std::string what = " tokens=" + std::to_string(tokens) + " experts=" + std::to_string(experts);
    expect_exact_i32(*gpu_, ggroups.sorted_pairs, groups.sorted_pairs, "sorted_pairs" + what);
    expect_exact_i32(*gpu_, ggroups.token_rows, groups.token_rows, "token_rows" + what);
    expect_exact_i32(*gpu_, ggroups.expert_offsets, groups.expert_offsets, "expert_offsets" + what);

    const Tensor y = random_rounded({pairs, hidden}, 550), weights = random_rounded({tokens, k}, 551, 0.f, 1.f);
    Tensor out = Tensor::host(DType::kF32, {tokens, hidden});
    ops::moe_combine(y, groups.sorted_pairs, weights, out);
    Tensor gout = poisoned(DType::kBF16, {tokens, hidden});
    ops::moe_combine(gpu_bf16(y), ggroups.sorted_pairs, gpu_copy(weights), gout);
    expect_close(*gpu_, gout, out, kBf16Tolerance, "moe_combine" + what);
  }
}

// Experts by range (--enable-expert-parallel): a rank's local experts grouped, other ranks'
// pairs after them in pair order, as the CPU places them; rank 0, a middle and the last rank.
TEST_F(CudaMoe, GroupPlacesOtherRanksPairsLastAsCpu) {
  const int64_t experts = 128, local = 32;
  for (const auto& [tokens, k] : std::vector<std::pair<int64_t, int64_t>>{{1, 8}, {7, 8}, {4096, 8}}) {
    const int64_t pairs = tokens * k;
    const Tensor ids = skewed_ids(tokens, k, experts, 560 + tokens), gids = gpu_copy(ids);
    for (const int64_t first : {int64_t{0}, int64_t{32}, int64_t{96}}) {
      const ops::MoeGroups groups{.sorted_pairs = Tensor::host(DType::kI32, {pairs}),
                                  .token_rows = Tensor::host(DType::kI32, {pairs}),
                                  .expert_offsets = Tensor::host(DType::kI32, {local + 1}),
                                  .first_expert = first};
      ops::moe_group(ids, groups);
      const ops::MoeGroups ggroups{.sorted_pairs = poisoned(DType::kI32, {pairs}),
                                   .token_rows = poisoned(DType::kI32, {pairs}),
                                   .expert_offsets = poisoned(DType::kI32, {local + 1}),
                                   .first_expert = first};
      ops::moe_group(gids, ggroups);
      const std::string what = " tokens=" + std::to_string(tokens) + " first_expert=" + std::to_string(first);
      expect_exact_i32(*gpu_, ggroups.sorted_pairs, groups.sorted_pairs, "sorted_pairs" + what);
      expect_exact_i32(*gpu_, ggroups.token_rows, groups.token_rows, "token_rows" + what);
      expect_exact_i32(*gpu_, ggroups.expert_offsets, groups.expert_offsets, "expert_offsets" + what);
    }
  }
}

// The decode path at Qwen3-30B-A3B's expert shapes (16 of its 128 experts): gate | up per
// token, down with the gated input per pair, then the combine adding into a residual.
TEST_F(CudaMoe, PairOrderDecodePathMatchesCpu) {
  const int64_t experts = 16, k = 8, hidden = 2048, inter = 768;
  const Tensor gate_up = random_bf16({experts, 2 * inter, hidden}, 700, 0.05f);
  const Tensor down = random_bf16({experts, hidden, inter}, 701, 0.05f);
  const Tensor ggate_up = gpu_copy(gate_up), gdown = gpu_copy(down);
  for (const int64_t tokens : {1, 2}) {
    const int64_t pairs = tokens * k;
    const Tensor ids = skewed_ids(tokens, k, experts, 710 + tokens), gids = gpu_copy(ids);
    const Tensor x = random_rounded({tokens, hidden}, 720 + tokens, -2.f, 2.f);
    const Tensor weights = random_rounded({tokens, k}, 730 + tokens, 0.f, 1.f);
    const Tensor residual = random_rounded({tokens, hidden}, 740 + tokens, -4.f, 4.f);
    const std::string what = " tokens=" + std::to_string(tokens);
    Tensor gu = Tensor::host(DType::kF32, {pairs, 2 * inter}), ys = Tensor::host(DType::kF32, {pairs, hidden});
    ops::expert_linear(x, gate_up, ids, gu);
    ops::expert_linear(gu, down, ids, ys, {.gated_input = ops::Activation::kSilu});
    Tensor out = Tensor::host(DType::kF32, {tokens, hidden});
    std::memcpy(out.data(), residual.data(), residual.nbytes());
    ops::moe_combine(ys, Tensor(), weights, out, {.accumulate = true});
    Tensor ggu = poisoned(DType::kBF16, {pairs, 2 * inter}), gys = poisoned(DType::kBF16, {pairs, hidden});
    ops::expert_linear(gpu_bf16(x), ggate_up, gids, ggu);
    expect_close(*gpu_, ggu, gu, kBf16Tolerance, "expert gate_up" + what);
    ops::expert_linear(ggu, gdown, gids, gys, {.gated_input = ops::Activation::kSilu});
    expect_close(*gpu_, gys, ys, kBf16Tolerance, "expert down" + what);
    Tensor gout = gpu_bf16(residual);
    ops::moe_combine(gys, Tensor(), gpu_copy(weights), gout, {.accumulate = true});
    expect_close(*gpu_, gout, out, kBf16Tolerance, "combine into residual" + what);
  }
}

}  // namespace
}  // namespace strata::test
