// Every dense CUDA op against the CPU op on the same random inputs (the GPU gets their bf16
// copies), at small shapes and at real ones (Llama-3.1-8B, Qwen3-30B-A3B). Outputs start
// poisoned with NaN so unwritten elements fail. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <tuple>

#include "ops/cuda_op_support.h"
#include "test_support.h"
#include "strata/ops/activation.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/embedding.h"
#include "strata/ops/linear.h"
#include "strata/ops/logits_mask.h"
#include "strata/ops/lora.h"
#include "strata/ops/mla.h"
#include "strata/ops/pending_tokens.h"
#include "strata/ops/rms_norm.h"
#include "strata/ops/rope.h"

namespace strata::test {
namespace {

using CudaOps = CudaOpTest;

TEST_F(CudaOps, EmbeddingCopiesRowsExactly) {
  for (const auto& [vocab, hidden, tokens] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1000, 128, 7}, {32000, 4096, 9}, {151936, 2048, 3}}) {
    const Tensor table = random_rounded({vocab, hidden}, 1);
    std::vector<int32_t> id_values;
    for (int64_t t = 0; t < tokens; ++t) id_values.push_back(static_cast<int32_t>((t * 7919 + 13) % vocab));
    const Tensor ids = int_tensor(id_values);
    Tensor ref = Tensor::host(DType::kF32, {tokens, hidden});
    ops::embedding(table, ids, ref);
    Tensor out = poisoned(DType::kBF16, {tokens, hidden});
    ops::embedding(gpu_bf16(table), gpu_copy(ids), out);
    const CompareResult r = compare(as_f32_host(*gpu_, out), ref);
    EXPECT_TRUE(r.finite);
    EXPECT_EQ(r.rel_l2, 0.0) << vocab << "x" << hidden;
    Tensor out_f32 = poisoned(DType::kF32, {tokens, hidden});
    ops::embedding(gpu_copy(table), gpu_copy(ids), out_f32);
    EXPECT_EQ(compare(as_f32_host(*gpu_, out_f32), ref).rel_l2, 0.0) << "f32 table";
  }
}

TEST_F(CudaOps, RmsNormMatchesCpu) {
  for (const auto& [rows, dim] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 4096}, {7, 4096}, {64, 2048}, {256, 128}, {3, 5120}}) {
    for (bool unit_offset : {false, true}) {
      const ops::RmsNormParams params{.eps = 1e-5f, .unit_offset = unit_offset};
      const Tensor x = random_rounded({rows, dim}, 2, -3.f, 3.f);
      const Tensor w = random_rounded({dim}, 3, 0.5f, 1.5f);
      Tensor ref = Tensor::host(DType::kF32, {rows, dim});
      ops::rms_norm(x, to_bf16_host(w), ref, params);
      Tensor out = poisoned(DType::kBF16, {rows, dim});
      ops::rms_norm(gpu_bf16(x), gpu_bf16(w), out, params);
      expect_close(*gpu_, out, ref, kBf16Tolerance, "rms_norm " + std::to_string(dim));
      Tensor in_place = gpu_bf16(x);
      ops::rms_norm(in_place, gpu_bf16(w), in_place, params);
      expect_close(*gpu_, in_place, ref, kBf16Tolerance, "rms_norm in place");
    }
  }
}

TEST_F(CudaOps, AddRmsNormUpdatesResidualAndNormalises) {
  for (const auto& [rows, dim] : std::vector<std::pair<int64_t, int64_t>>{{1, 4096}, {33, 2048}, {5, 96}}) {
    const Tensor x = random_rounded({rows, dim}, 4, -2.f, 2.f);
    const Tensor residual = random_rounded({rows, dim}, 5, -4.f, 4.f);
    const Tensor w = random_rounded({dim}, 6, 0.5f, 1.5f);
    Tensor ref_res = Tensor::host(DType::kF32, {rows, dim});
    std::memcpy(ref_res.data(), residual.data(), residual.nbytes());
    Tensor ref = Tensor::host(DType::kF32, {rows, dim});
    ops::add_rms_norm(ref_res, x, to_bf16_host(w), ref, {.eps = 1e-6f});
    Tensor res = gpu_bf16(residual);
    Tensor out = poisoned(DType::kBF16, {rows, dim});
    ops::add_rms_norm(res, gpu_bf16(x), gpu_bf16(w), out, {.eps = 1e-6f});
    expect_close(*gpu_, out, ref, kBf16Tolerance, "add_rms_norm out");
    expect_close(*gpu_, res, ref_res, kBf16Tolerance, "add_rms_norm residual");
  }
}

TEST_F(CudaOps, RopeMatchesCpuWithLlama3ScalingAndPartialRotary) {
  RopeConfig llama3{.rope_type = "llama3", .rope_theta = 500000.0, .factor = 8.0, .low_freq_factor = 1.0,
                    .high_freq_factor = 4.0, .original_max_position_embeddings = 8192};
  struct Case { int64_t tokens, q_heads, kv_heads, head_dim, rotary_dim; float scaling; };
  for (const Case& c : std::vector<Case>{{5, 32, 8, 128, 128, 1.0f}, {64, 32, 4, 128, 128, 1.0f},
                                          {9, 16, 2, 256, 64, 1.25f}, {3, 4, 2, 32, 32, 1.0f}}) {
    const ops::RopeTable table = ops::rope_frequencies(llama3, c.rotary_dim, 131072);
    Tensor inv = Tensor::host(DType::kF32, {c.rotary_dim / 2});
    std::memcpy(inv.data(), table.inv_freq.data(), inv.nbytes());
    const Tensor q = random_rounded({c.tokens, c.q_heads, c.head_dim}, 7);
    const Tensor k = random_rounded({c.tokens, c.kv_heads, c.head_dim}, 8);
    std::vector<int32_t> pos;
    for (int64_t t = 0; t < c.tokens; ++t) pos.push_back(static_cast<int32_t>((t * 104729) % 120000));
    const ops::RopeParams params{.rotary_dim = c.rotary_dim, .attention_scaling = c.scaling};
    Tensor q_ref = random_rounded(q.shape(), 7), k_ref = random_rounded(k.shape(), 8);
    ops::rope(q_ref, k_ref, int_tensor(pos), inv, params);
    Tensor gq = gpu_bf16(q), gk = gpu_bf16(k);
    ops::rope(gq, gk, gpu_copy(int_tensor(pos)), gpu_copy(inv), params);
    expect_close(*gpu_, gq, q_ref, kBf16Tolerance, "rope q");
    expect_close(*gpu_, gk, k_ref, kBf16Tolerance, "rope k");
  }
}

TEST_F(CudaOps, LinearMatchesCpuAtRealShapes) {
  struct Case { int64_t tokens, in, out; bool bias; DType out_dtype; };
  for (const Case& c : std::vector<Case>{
           {1, 4096, 4096, false, DType::kBF16},     // Llama-3.1-8B q_proj / o_proj, decode
           {7, 4096, 14336, false, DType::kBF16},    // gate/up
           {33, 14336, 4096, false, DType::kBF16},   // down
           {128, 4096, 1024, true, DType::kBF16},    // k_proj with a qkv bias (Qwen2-style)
           {16, 2048, 4096, false, DType::kBF16},    // Qwen3-30B-A3B q_proj
           {3, 2048, 30000, false, DType::kF32},     // an lm_head writing f32 logits
           {2, 128, 384, true, DType::kF32},
           {5, 100, 50, true, DType::kBF16}}) {      // rows not 16-byte aligned
    const Tensor x = random_rounded({c.tokens, c.in}, 9);
    const Tensor w = random_rounded({c.out, c.in}, 10, -0.05f, 0.05f);
    const Tensor b = random_rounded({c.out}, 11);
    Tensor ref = Tensor::host(DType::kF32, {c.tokens, c.out});
    ops::linear(x, to_bf16_host(w), c.bias ? to_bf16_host(b) : Tensor(), ref);
    Tensor out = poisoned(c.out_dtype, {c.tokens, c.out});
    ops::linear(gpu_bf16(x), gpu_bf16(w), c.bias ? gpu_bf16(b) : Tensor(), out);
    expect_close(*gpu_, out, ref, kBf16Tolerance,
                 "linear " + std::to_string(c.tokens) + "x" + std::to_string(c.in) + "x" + std::to_string(c.out));
  }
}

TEST_F(CudaOps, GatedActivationsMatchCpu) {
  for (ops::Activation act : {ops::Activation::kSilu, ops::Activation::kGeluTanh, ops::Activation::kGelu,
                              ops::Activation::kRelu2, ops::Activation::kClampedSwiglu, ops::Activation::kTanh}) {
    // The clamped SwiGLU gets inputs past its clamps (7).
    const float range = act == ops::Activation::kClampedSwiglu ? 10.f : 1.f;
    for (const Shape& shape : {Shape{3, 14336}, Shape{64, 768}, Shape{1, 6144}}) {
      const Tensor gate = random_rounded(shape, 12, -4.f * range, 4.f * range);
      const Tensor up = random_rounded(shape, 13, -2.f * range, 2.f * range);
      Tensor ref = Tensor::host(DType::kF32, shape);
      ops::gated_activation(gate, up, ref, act);
      Tensor out = poisoned(DType::kBF16, shape);
      ops::gated_activation(gpu_bf16(gate), gpu_bf16(up), out, act);
      expect_close(*gpu_, out, ref, kBf16Tolerance, "gated act " + std::to_string(static_cast<int>(act)));
      Tensor plain_ref = Tensor::host(DType::kF32, shape);
      ops::activation(gate, plain_ref, act);
      Tensor plain = gpu_bf16(gate);
      ops::activation(plain, plain, act);
      expect_close(*gpu_, plain, plain_ref, kBf16Tolerance, "act in place");
    }
  }
}

TEST_F(CudaOps, ElementwiseOpsMatchCpu) {
  const Shape shape{37, 4096};
  const Tensor x = random_rounded(shape, 14, -3.f, 3.f), y = random_rounded(shape, 15, -3.f, 3.f);
  Tensor ref = random_rounded(shape, 14, -3.f, 3.f);
  ops::add(ref, y);
  Tensor gx = gpu_bf16(x);
  ops::add(gx, gpu_bf16(y));
  expect_close(*gpu_, gx, ref, kBf16Tolerance, "add");
  ref = random_rounded(shape, 14, -3.f, 3.f);
  ops::sigmoid_gate(ref, y);
  gx = gpu_bf16(x);
  ops::sigmoid_gate(gx, gpu_bf16(y));
  expect_close(*gpu_, gx, ref, kBf16Tolerance, "sigmoid_gate");
  ref = random_rounded(shape, 14, -3.f, 3.f);
  ops::scale(ref, 0.37f);
  gx = gpu_bf16(x);
  ops::scale(gx, 0.37f);
  expect_close(*gpu_, gx, ref, kBf16Tolerance, "scale");
}

TEST_F(CudaOps, SplitJoinGatherConvertAreExact) {
  const Tensor packed = random_rounded({9, 16, 256}, 16);
  Tensor first_ref = Tensor::host(DType::kF32, {9, 16, 128}), second_ref = Tensor::host(DType::kF32, {9, 16, 128});
  ops::split_halves(packed, first_ref, second_ref);
  Tensor first = poisoned(DType::kBF16, {9, 16, 128}), second = poisoned(DType::kBF16, {9, 16, 128});
  ops::split_halves(gpu_bf16(packed), first, second);
  EXPECT_EQ(compare(as_f32_host(*gpu_, first), first_ref).rel_l2, 0.0);
  EXPECT_EQ(compare(as_f32_host(*gpu_, second), second_ref).rel_l2, 0.0);

  const Tensor left = random_rounded({9, 48}, 19), right = random_rounded({9, 48}, 20);
  Tensor joined_ref = Tensor::host(DType::kF32, {9, 96});
  ops::join_halves(left, right, joined_ref);
  Tensor joined = poisoned(DType::kBF16, {9, 96});
  ops::join_halves(gpu_bf16(left), gpu_bf16(right), joined);
  EXPECT_EQ(compare(as_f32_host(*gpu_, joined), joined_ref).rel_l2, 0.0);

  const Tensor src = random_rounded({50, 4096}, 17);
  const Tensor idx = int_tensor({49, 0, 7, 7, 23});
  Tensor gathered_ref = Tensor::host(DType::kF32, {5, 4096});
  ops::gather_rows(src, idx, gathered_ref);
  Tensor gathered = poisoned(DType::kBF16, {5, 4096});
  ops::gather_rows(gpu_bf16(src), gpu_copy(idx), gathered);
  EXPECT_EQ(compare(as_f32_host(*gpu_, gathered), gathered_ref).rel_l2, 0.0);

  const Tensor f = random_f32({11, 300}, 18);  // not bf16-rounded: conversion rounds
  Tensor as_bf16 = poisoned(DType::kBF16, f.shape());
  ops::convert(gpu_copy(f), as_bf16);
  const Tensor back = as_f32_host(*gpu_, as_bf16);
  for (int64_t i = 0; i < f.numel(); ++i)
    ASSERT_EQ(back.data_as<float>()[i], bf16_to_f32(f32_to_bf16(f.data_as<float>()[i]))) << i;
  Tensor widened = poisoned(DType::kF32, f.shape());
  ops::convert(as_bf16, widened);
  EXPECT_EQ(compare(as_f32_host(*gpu_, widened), back).rel_l2, 0.0);
}

// MLA's per-head key/value expansion and the value narrowing, at DeepSeek-V3's widths (128
// heads, nope 128, rope 64, v 128) and the fixture's: copies, so exact.
TEST_F(CudaOps, MlaExpandAndNarrowAreExact) {
  for (const auto& [tokens, heads, nope, rope, v] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>>{
           {5, 128, 128, 64, 128}, {33, 4, 32, 16, 32}}) {
    const Tensor kv = random_rounded({tokens, heads, nope + v}, 21), k_rot = random_rounded({tokens, rope}, 22);
    Tensor k_ref = Tensor::host(DType::kF32, {tokens, heads, rope + nope});
    Tensor v_ref = Tensor::host(DType::kF32, {tokens, heads, rope + nope});
    ops::mla_expand_kv(kv, k_rot, nope, k_ref, v_ref);
    Tensor k = poisoned(DType::kBF16, k_ref.shape()), v_out = poisoned(DType::kBF16, v_ref.shape());
    ops::mla_expand_kv(gpu_bf16(kv), gpu_bf16(k_rot), nope, k, v_out);
    EXPECT_EQ(compare(as_f32_host(*gpu_, k), k_ref).rel_l2, 0.0);
    EXPECT_EQ(compare(as_f32_host(*gpu_, v_out), v_ref).rel_l2, 0.0);
    Tensor narrow_ref = Tensor::host(DType::kF32, {tokens, heads, v});
    ops::narrow_heads(k_ref, narrow_ref);
    Tensor narrow = poisoned(DType::kBF16, {tokens, heads, v});
    ops::narrow_heads(gpu_bf16(k_ref), narrow);
    EXPECT_EQ(compare(as_f32_host(*gpu_, narrow), narrow_ref).rel_l2, 0.0);
  }
}

// LoRA deltas for tokens on different adapters (and none), into a column slice of a fused
// output, at Llama-3.1-8B's q width (rank 16) and a small shape.
TEST_F(CudaOps, LoraAddMatchesCpu) {
  for (const auto& [tokens, in, out, rank, cols, offset] :
       std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>>{
           {7, 4096, 4096, 16, 6144, 0}, {40, 128, 64, 8, 256, 128}}) {
    const int64_t slots = 3;
    const Tensor x = random_rounded({tokens, in}, 31), a = random_rounded({slots, rank, in}, 32, -0.05f, 0.05f);
    const Tensor b = random_rounded({slots, out, rank}, 33, -0.05f, 0.05f), y = random_rounded({tokens, cols}, 34);
    const Tensor scales = random_f32({slots}, 35, 0.5f, 2.f);
    std::vector<int32_t> slot_values;
    for (int64_t t = 0; t < tokens; ++t) slot_values.push_back(static_cast<int32_t>(t % 4) - 1);  // -1, 0, 1, 2
    const Tensor token_slots = int_tensor(slot_values);
    Tensor ref = Tensor::host(DType::kF32, {tokens, cols});
    std::memcpy(ref.data(), y.data(), y.nbytes());
    ops::lora_add({.x = x, .a = a, .b = b, .scales = scales, .token_slots = token_slots, .y = ref, .col_offset = offset});
    Tensor got = gpu_bf16(y);
    ops::lora_add({.x = gpu_bf16(x), .a = gpu_bf16(a), .b = gpu_bf16(b), .scales = gpu_copy(scales),
                   .token_slots = gpu_copy(token_slots), .y = got, .col_offset = offset});
    expect_close(*gpu_, got, ref, kBf16Tolerance, "lora_add " + std::to_string(in));
  }
}

// Constrained decoding's mask on a Qwen-size vocabulary: rows named twice (n > 1), every
// masked logit -inf, every other one untouched.
TEST_F(CudaOps, LogitsMaskMatchesCpu) {
  const int64_t vocab = 151936, words = (vocab + 31) / 32;
  const Tensor logits = random_f32({4, vocab}, 41);
  std::vector<int32_t> rows = {2, 0, 2}, bits;
  for (int64_t m = 0; m < 3; ++m)
    for (int64_t w = 0; w < words; ++w) bits.push_back(static_cast<int32_t>((w * 2654435761u + m * 40503u) ^ 0x5bd1e995u));
  for (int64_t w = 0; w < words; ++w) bits[2 * words + w] = bits[w];  // row 2's two masks agree
  Tensor ref = Tensor::host(DType::kF32, {4, vocab});
  std::memcpy(ref.data(), logits.data(), logits.nbytes());
  const Tensor rows_t = int_tensor(rows), bits_t = int_tensor(bits).reshape({3, words});
  ops::mask_logits(ref, rows_t, bits_t);
  Tensor got = gpu_copy(logits);
  ops::mask_logits(got, gpu_copy(rows_t), gpu_copy(bits_t));
  const Tensor back = gpu_->to_host(got);
  EXPECT_EQ(std::memcmp(back.data(), ref.data(), ref.nbytes()), 0);
}

// The previous step's sampled ids land in the pending slots of the next step's tokens; every
// other token keeps its value.
TEST_F(CudaOps, PendingTokensFillExactlyTheirSlots) {
  std::vector<int32_t> sampled_values, token_values, pair_values;
  for (int32_t i = 0; i < 300; ++i) sampled_values.push_back((i * 7919 + 11) % 151936);
  for (int32_t t = 0; t < 1000; ++t) token_values.push_back((t * 104729 + 5) % 151936);
  for (int32_t j = 0; j < 257; ++j) pair_values.insert(pair_values.end(), {(j * 389) % 1000, (j * 13) % 300});
  const Tensor sampled = int_tensor(sampled_values), pairs = int_tensor(pair_values).reshape({257, 2});
  Tensor ref = int_tensor(token_values);
  ops::fill_pending_tokens(sampled, pairs, ref);
  Tensor out = gpu_copy(int_tensor(token_values));
  ops::fill_pending_tokens(gpu_copy(sampled), gpu_copy(pairs), out);
  const Tensor back = gpu_->to_host(out);
  EXPECT_EQ(std::memcmp(back.data(), ref.data(), ref.nbytes()), 0);
}

}  // namespace
}  // namespace strata::test
