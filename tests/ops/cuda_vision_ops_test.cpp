// The ops of the Qwen3.5 vision tower that gained CUDA kernels, against the CPU on the same random
// inputs: varlen_attention (segments shorter and longer than a 64-token tile, empty ones, head
// sizes 16-128 including the real towers' 72), embedding_bag with the tower's bilinear taps, and
// rope with [3, T] MRoPE positions in the tower's layout and the text model's. f32 and bf16.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "ops/cuda_op_support.h"
#include "strata/model/vision/vision_grid.h"
#include "strata/ops/embedding_bag.h"
#include "strata/ops/rope.h"
#include "strata/ops/varlen_attention.h"

namespace strata::test {
namespace {

class CudaVisionOps : public CudaOpTest {
 protected:
  ops::VarlenSegments segments_on_gpu(const std::vector<int32_t>& cu) {
    int64_t longest = 0;
    for (size_t s = 1; s < cu.size(); ++s) longest = std::max<int64_t>(longest, cu[s] - cu[s - 1]);
    return {.cu_seqlens = gpu_copy(int_tensor(cu)), .max_seqlen = longest};
  }
};

struct VarlenCase {
  std::vector<int32_t> cu_seqlens;
  int64_t heads, head_dim;
};

std::string describe(const VarlenCase& c) {
  std::string s = "varlen_attention heads " + std::to_string(c.heads) + " head_dim " + std::to_string(c.head_dim) +
                  " segments";
  for (int32_t v : c.cu_seqlens) s += " " + std::to_string(v);
  return s;
}

TEST_F(CudaVisionOps, VarlenAttentionMatchesCpu) {
  const std::vector<VarlenCase> cases = {
      {{0, 1}, 1, 16},                // one token attends to itself only
      {{0, 5, 70, 200}, 2, 72},       // Qwen3.5's vision head size; a short segment, tile-crossing ones
      {{0, 64, 128, 129}, 2, 128},    // segments ending exactly on tile boundaries; the largest head size
      {{0, 300, 300, 310}, 1, 80},    // an empty segment in the middle
      {{0, 1100}, 3, 64},             // one long image: 18 key tiles under an online softmax
      {{0, 37, 90}, 4, 32},
  };
  for (const VarlenCase& c : cases) {
    const int64_t t = c.cu_seqlens.back();
    const std::string what = describe(c);
    const Shape shape{t, c.heads, c.head_dim};
    const Tensor q = random_rounded(shape, 61, -2.f, 2.f), k = random_rounded(shape, 62, -2.f, 2.f);
    const Tensor v = random_rounded(shape, 63);
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    std::vector<int32_t> cu = c.cu_seqlens;
    Tensor ref = Tensor::host(DType::kF32, shape);
    ops::varlen_attention(q, k, v, {.cu_seqlens = Tensor::view(cu.data(), DType::kI32, {static_cast<int64_t>(cu.size())}),
                                    .max_seqlen = segments_on_gpu(cu).max_seqlen},
                          scale, ref);
    const ops::VarlenSegments segments = segments_on_gpu(cu);
    Tensor out_f32 = poisoned(DType::kF32, shape);
    ops::varlen_attention(gpu_copy(q), gpu_copy(k), gpu_copy(v), segments, scale, out_f32);
    expect_close(*gpu_, out_f32, ref, 1e-5, what + " f32");
    Tensor out_bf16 = poisoned(DType::kBF16, shape);
    ops::varlen_attention(gpu_bf16(q), gpu_bf16(k), gpu_bf16(v), segments, scale, out_bf16);
    expect_close(*gpu_, out_bf16, ref, kBf16Tolerance, what + " bf16");
  }
}

// A segment's outputs do not depend on the other segments: the first segment run alone gives
// bit-identical rows (each block reads its own segment's keys only).
TEST_F(CudaVisionOps, VarlenAttentionSegmentsAreIndependent) {
  const int64_t heads = 2, d = 72, first = 90, total = 250;
  const Tensor q = random_rounded({total, heads, d}, 71), k = random_rounded({total, heads, d}, 72);
  const Tensor v = random_rounded({total, heads, d}, 73);
  Tensor packed = poisoned(DType::kF32, {total, heads, d});
  ops::varlen_attention(gpu_copy(q), gpu_copy(k), gpu_copy(v), segments_on_gpu({0, first, total}), 0.2f, packed);
  const Tensor q0 = gpu_copy(q).slice_rows(0, first), k0 = gpu_copy(k).slice_rows(0, first);
  const Tensor v0 = gpu_copy(v).slice_rows(0, first);
  Tensor alone = poisoned(DType::kF32, {first, heads, d});
  ops::varlen_attention(q0, k0, v0, segments_on_gpu({0, first}), 0.2f, alone);
  const Tensor got = as_f32_host(*gpu_, packed), want = as_f32_host(*gpu_, alone);
  for (int64_t i = 0; i < first * heads * d; ++i)
    ASSERT_EQ(got.data_as<float>()[i], want.data_as<float>()[i]) << "element " << i;
}

// The tower's position resampling: 4 bilinear taps per patch into a side x side table.
TEST_F(CudaVisionOps, EmbeddingBagMatchesCpuOnBilinearTaps) {
  for (const auto& [side, rows, cols, dim] : std::vector<std::array<int32_t, 4>>{
           {4, 6, 10, 32}, {48, 32, 46, 72}, {48, 2, 2, 1152}}) {
    VisionGrid grid = vision_grid({1, rows, cols}, 2, side);
    const int64_t p = static_cast<int64_t>(grid.rows.size());
    const Tensor table = random_rounded({static_cast<int64_t>(side) * side, dim}, 81);
    const Tensor taps = Tensor::view(grid.taps.data(), DType::kI32, {p, 4});
    const Tensor weights = Tensor::view(grid.tap_weights.data(), DType::kF32, {p, 4});
    Tensor ref = Tensor::host(DType::kF32, {p, dim});
    ops::embedding_bag(table, taps, weights, ref);
    Tensor out = poisoned(DType::kF32, {p, dim});
    ops::embedding_bag(gpu_copy(table), gpu_copy(taps), gpu_copy(weights), out);
    expect_close(*gpu_, out, ref, 1e-6, "embedding_bag side " + std::to_string(side) + " grid " +
                                            std::to_string(rows) + "x" + std::to_string(cols));
  }
}

struct MropeCase {
  std::string what;
  int64_t q_heads, kv_heads, head_dim, rotary_dim;
  ops::MropeSections sections;
};

// [3, T] positions: the tower's (rows, columns, zeros; sections in runs over the whole head) and
// the text model's (three distinct streams, interleaved sections, partial rotary).
TEST_F(CudaVisionOps, RopeWithMropePositionsMatchesCpu) {
  const std::vector<MropeCase> cases = {
      {"vision tower layout", 16, 16, 72, 72, {.section = {18, 18, 0}, .interleaved = false}},
      {"text layout", 4, 2, 32, 8, {.section = {2, 1, 1}, .interleaved = true}},
      {"text layout, Qwen3.5 real sections", 16, 2, 256, 64, {.section = {11, 11, 10}, .interleaved = true}},
  };
  const int64_t t = 77;
  for (const MropeCase& c : cases) {
    std::vector<int32_t> positions(3 * t);
    for (int64_t i = 0; i < t; ++i) {
      positions[i] = static_cast<int32_t>(3 * i + 100);
      positions[t + i] = static_cast<int32_t>(i % 9);
      positions[2 * t + i] = static_cast<int32_t>((i * 7) % 13);
    }
    std::vector<float> inv_freq(c.rotary_dim / 2);
    for (size_t i = 0; i < inv_freq.size(); ++i)
      inv_freq[i] = static_cast<float>(std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(c.rotary_dim)));
    const Tensor pos = int_tensor(positions).reshape({3, t});
    const Tensor inv = Tensor::view(inv_freq.data(), DType::kF32, {static_cast<int64_t>(inv_freq.size())});
    const ops::RopeParams params{.rotary_dim = c.rotary_dim, .mrope = c.sections};
    const Tensor q = random_rounded({t, c.q_heads, c.head_dim}, 91), k = random_rounded({t, c.kv_heads, c.head_dim}, 92);
    Tensor q_ref = random_rounded({t, c.q_heads, c.head_dim}, 91), k_ref = random_rounded({t, c.kv_heads, c.head_dim}, 92);
    ops::rope(q_ref, k_ref, pos, inv, params);
    Tensor gq = gpu_copy(q), gk = gpu_copy(k);
    ops::rope(gq, gk, gpu_copy(pos), gpu_copy(inv), params);
    expect_close(*gpu_, gq, q_ref, 1e-5, c.what + " q f32");
    expect_close(*gpu_, gk, k_ref, 1e-5, c.what + " k f32");
    Tensor bq = gpu_bf16(q), bk = gpu_bf16(k);
    ops::rope(bq, bk, gpu_copy(pos), gpu_copy(inv), params);
    expect_close(*gpu_, bq, q_ref, kBf16Tolerance, c.what + " q bf16");
    expect_close(*gpu_, bk, k_ref, kBf16Tolerance, c.what + " k bf16");
  }
}

}  // namespace
}  // namespace strata::test
