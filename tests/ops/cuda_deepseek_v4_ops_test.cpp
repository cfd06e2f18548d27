// The CUDA twins of DeepSeek-V4's attention ops against the CPU ops on the same random inputs:
// window compression (with and without the overlapping series, absent places), attention over
// the window and compressed entries (sliding only, every closed entry, the indexer's picks; key
// counts past one tile of the kernel), the f32 linear its hyper-connection mixes use, and the
// inverse rotary. Every output is poisoned first.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/cuda_op_support.h"
#include "strata/ops/compressed_attention.h"
#include "strata/ops/compressed_kv.h"
#include "strata/ops/linear.h"
#include "strata/ops/rope.h"

namespace strata::test {
namespace {

Tensor i32(Shape shape, const std::vector<int32_t>& values) {
  Tensor t = Tensor::host(DType::kI32, shape);
  std::copy(values.begin(), values.end(), t.data_as<int32_t>());
  return t;
}

// Three sequences in scattered paged blocks of 16: a 6-token chunk after 30 cached tokens, a
// whole 11-token prompt and one decode token at position 69.
struct ScatteredRows {
  static constexpr int64_t kBlockSize = 16, kNumBlocks = 12;
  std::vector<int32_t> cu = {0, 6, 17, 18}, kv_lens = {36, 11, 70};
  std::vector<int32_t> tables = {4, 10, 1, -1, -1, 6, -1, -1, -1, -1, 9, 0, 3, 11, 7};  // [3, 5]
  int64_t num_tokens() const { return cu.back(); }
  int64_t num_slots() const { return kNumBlocks * kBlockSize; }
  ops::AttentionMetadata host() const {
    return {.cu_seqlens = i32({4}, cu), .kv_lens = i32({3}, kv_lens), .block_tables = i32({3, 5}, tables),
            .num_rows = 3, .max_q_len = 11, .max_kv_len = 70};
  }
  ops::AttentionMetadata device(Backend& gpu) const {
    ops::AttentionMetadata m = host();
    m.cu_seqlens = gpu.from_host(m.cu_seqlens), m.kv_lens = gpu.from_host(m.kv_lens);
    m.block_tables = gpu.from_host(m.block_tables);
    return m;
  }
  // Query t's position (as the kernels place it).
  int64_t position(int64_t t) const {
    int64_t r = 0;
    while (cu[r + 1] <= t) ++r;
    return kv_lens[r] - (cu[r + 1] - cu[r]) + (t - cu[r]);
  }
};

class CudaDeepseekV4Ops : public CudaOpTest {};

TEST_F(CudaDeepseekV4Ops, CompressKvWindows) {
  const ScatteredRows paged;
  const int64_t d = 40, rate = 4, width = 2 * d, kv_offset = 8, gate_offset = kv_offset + width;
  const Tensor rows = random_rounded({paged.num_slots(), gate_offset + width + 4}, 900, -2.f, 2.f);
  const Tensor norm = random_rounded({d}, 901, 0.5f, 1.5f);
  const Tensor g_rows = gpu_copy(rows);
  for (bool overlap : {false, true}) {
    const int64_t places = overlap ? 2 * rate : rate, series = overlap ? width : d;
    // Entry 0 of the overlapping form has no previous window (-1 places take no weight).
    std::vector<int32_t> slots;
    for (int64_t e = 0; e < 5; ++e)
      for (int64_t j = 0; j < places; ++j)
        slots.push_back(overlap && e == 0 && j < rate ? -1 : static_cast<int32_t>((e * 37 + j * 11) % paged.num_slots()));
    const Tensor window_slots = i32({5, places}, slots);
    const Tensor bias = random_rounded({rate, series}, 902 + overlap, -1.f, 1.f);
    const ops::CompressedKvParams params{.head_dim = d, .rate = rate, .overlap = overlap, .kv_offset = kv_offset,
                                         .gate_offset = gate_offset, .eps = 1e-6f};
    Tensor ref = Tensor::host(DType::kF32, {5, d});
    ops::compress_kv_windows(rows, window_slots, bias, norm, params, ref);
    Tensor out = poisoned(DType::kF32, {5, d});
    ops::compress_kv_windows(g_rows, gpu_copy(window_slots), gpu_copy(bias), gpu_copy(norm), params, out);
    expect_close(*gpu_, out, ref, 1e-5, overlap ? "compress_kv_windows overlap" : "compress_kv_windows");
  }
}

// Window 40 with rate 2 gives up to 40 + 35 keys: two tiles of the kernel.
TEST_F(CudaDeepseekV4Ops, CompressedAttentionOverWindowAndEntries) {
  const ScatteredRows paged;
  const int64_t t = paged.num_tokens(), heads = 4, d = 48, entry_offset = 56;
  const Tensor rows = random_rounded({paged.num_slots(), entry_offset + d}, 910, -1.f, 1.f);
  const Tensor q = random_rounded({t, heads, d}, 911, -1.f, 1.f);
  const Tensor sinks = random_rounded({heads}, 912, -1.f, 1.f);
  const Tensor g_rows = gpu_copy(rows), g_q = gpu_copy(q);
  struct Case {
    int64_t window, rate;
    bool selected;
  };
  for (const Case c : {Case{8, 0, false}, Case{40, 2, false}, Case{8, 4, true}, Case{40, 4, true}}) {
    ops::CompressedAttentionParams params{.head_dim = d, .block_size = ScatteredRows::kBlockSize,
                                          .sliding_window = c.window, .rate = c.rate, .entry_offset = entry_offset,
                                          .scale = 1.0f / std::sqrt(static_cast<float>(d)), .sinks = sinks};
    if (c.selected) {  // three picks a query among its closed entries, -1 where it has fewer
      std::vector<int32_t> picks;
      for (int64_t i = 0; i < t; ++i) {
        const int64_t closed = (paged.position(i) + 1) / c.rate;
        for (int64_t j = 0; j < 3; ++j) picks.push_back(j < closed ? static_cast<int32_t>((i * 5 + j * 7) % closed) : -1);
      }
      params.selected = i32({t, 3}, picks);
    }
    Tensor ref = Tensor::host(DType::kF32, {t, heads, d});
    ops::compressed_attention(q, rows, paged.host(), params, ref);
    ops::CompressedAttentionParams on_gpu = params;
    on_gpu.sinks = gpu_copy(sinks);
    if (c.selected) on_gpu.selected = gpu_copy(params.selected);
    Tensor out = poisoned(DType::kF32, {t, heads, d});
    ops::compressed_attention(g_q, g_rows, paged.device(*gpu_), on_gpu, out);
    expect_close(*gpu_, out, ref, 1e-5,
                 "compressed_attention window " + std::to_string(c.window) + " rate " + std::to_string(c.rate) +
                     (c.selected ? " selected" : ""));
  }
}

TEST_F(CudaDeepseekV4Ops, LinearInF32) {
  const Tensor x = random_rounded({5, 300}, 920, -1.f, 1.f), w = random_rounded({24, 300}, 921, -0.1f, 0.1f);
  const Tensor bias = random_rounded({24}, 922, -1.f, 1.f), base = random_rounded({5, 24}, 923, -1.f, 1.f);
  Tensor ref = host_copy(base);
  ops::linear(x, w, bias, ref, {.accumulate = true});
  Tensor out = gpu_copy(base);
  ops::linear(gpu_copy(x), gpu_copy(w), gpu_copy(bias), out, {.accumulate = true});
  expect_close(*gpu_, out, ref, 1e-6, "linear f32 accumulate");
  Tensor plain_ref = Tensor::host(DType::kF32, {5, 24});
  ops::linear(x, w, Tensor(), plain_ref);
  Tensor plain = poisoned(DType::kF32, {5, 24});
  ops::linear(gpu_copy(x), gpu_copy(w), Tensor(), plain);
  expect_close(*gpu_, plain, plain_ref, 1e-6, "linear f32");
}

TEST_F(CudaDeepseekV4Ops, InverseRopeUndoesTheRotation) {
  const int64_t t = 6, heads = 3, d = 32, rotary = 16;
  const Tensor x = random_rounded({t, heads, d}, 930, -1.f, 1.f);
  const Tensor positions = i32({t}, {0, 3, 17, 250, 4095, 77});
  std::vector<float> freq(rotary / 2);
  for (int64_t i = 0; i < rotary / 2; ++i) freq[i] = std::pow(10000.f, -2.f * static_cast<float>(i) / rotary);
  Tensor inv_freq = Tensor::host(DType::kF32, {rotary / 2});
  std::copy(freq.begin(), freq.end(), inv_freq.data_as<float>());
  Tensor ref = host_copy(x), ref_k = random_rounded({t, 1, d}, 931, -1.f, 1.f);
  ops::rope(ref, ref_k, positions, inv_freq, {.rotary_dim = rotary, .inverse = true});
  Tensor got = gpu_copy(x), got_k = gpu_copy(ref_k);
  ops::rope(got, got_k, gpu_copy(positions), gpu_copy(inv_freq), {.rotary_dim = rotary, .inverse = true});
  expect_close(*gpu_, got, ref, 1e-5, "rope inverse");
  ops::rope(got, got_k, gpu_copy(positions), gpu_copy(inv_freq), {.rotary_dim = rotary});
  expect_close(*gpu_, got, x, 1e-5, "rope inverse, then forward");
}

}  // namespace
}  // namespace strata::test
