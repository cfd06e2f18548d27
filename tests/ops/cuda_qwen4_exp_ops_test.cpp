// The CUDA twins of Qwen4-Exp's ops against the CPU ops on the same random inputs: the gated
// hyper-connection ops and the stream repeat (bf16 activations, f32 logits), the PLE n-gram ids
// (exact, with carry, per-token carries and batched slots) and gate, and QSA's cache-row ops
// (f32 rows in scattered paged blocks: row stores, block means, the indexer's top-k exactly,
// block-sparse attention). Every output is poisoned first; failures name the op and the element.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <tuple>

#include "ops/cuda_op_support.h"
#include "strata/ops/block_sparse_attention.h"
#include "strata/ops/causal_conv1d.h"
#include "strata/ops/compressed_attention.h"
#include "strata/ops/compressed_kv.h"
#include "strata/ops/gated_residual.h"
#include "strata/ops/hyper_connection.h"
#include "strata/ops/per_layer_embedding.h"

namespace strata::test {
namespace {

class CudaQwen4ExpOps : public CudaOpTest {
 protected:
  // i32 outputs poisoned with 0x7F7F7F7F: -1 (0xFF bytes) is a value the ops write.
  Tensor poisoned_i32(Shape shape) {
    Tensor t = gpu_->empty(DType::kI32, shape);
    gpu_->fill_bytes(t, 0x7F);
    return t;
  }
};

Tensor i32_host(Shape shape, const std::vector<int32_t>& values) {
  Tensor t = Tensor::host(DType::kI32, shape);
  std::copy(values.begin(), values.end(), t.data_as<int32_t>());
  return t;
}

// Every element within atol + rtol |ref| (atol relative to the reference's RMS); the first one
// that is not is reported with its index, and the relative L2 error as every CUDA op test does.
void expect_elements_close(Backend& gpu, const Tensor& got, const Tensor& ref, double rtol, const std::string& what) {
  ASSERT_EQ(got.numel(), ref.numel()) << what;
  const Tensor g = as_f32_host(gpu, got);
  double sum_sq = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) sum_sq += std::pow(static_cast<double>(ref.data_as<float>()[i]), 2);
  const double atol = rtol * std::sqrt(sum_sq / static_cast<double>(std::max<int64_t>(1, ref.numel())));
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double x = g.data_as<float>()[i], r = ref.data_as<float>()[i];
    if (!std::isfinite(x) || std::fabs(x - r) > atol + rtol * std::fabs(r)) {
      ADD_FAILURE() << what << ": element " << i << " of " << ref.numel() << " is " << x << ", the CPU has " << r;
      break;
    }
  }
  expect_close(gpu, got, ref, rtol, what);
}

void expect_same_i32(Backend& gpu, const Tensor& got, const Tensor& ref, const std::string& what) {
  const Tensor h = got.device().is_cpu() ? got : gpu.to_host(got);
  ASSERT_EQ(h.numel(), ref.numel()) << what;
  for (int64_t i = 0; i < ref.numel(); ++i)
    ASSERT_EQ(h.data_as<int32_t>()[i], ref.data_as<int32_t>()[i]) << what << ": element " << i;
}

void expect_same_f32(Backend& gpu, const Tensor& got, const Tensor& ref, const std::string& what) {
  const Tensor h = gpu.to_host(got);
  ASSERT_EQ(h.numel(), ref.numel()) << what;
  for (int64_t i = 0; i < ref.numel(); ++i)
    ASSERT_EQ(h.data_as<float>()[i], ref.data_as<float>()[i]) << what << ": element " << i;
}

TEST_F(CudaQwen4ExpOps, StreamRmsNormPerGroup) {
  for (const auto& [tokens, streams, group] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {5, 3, 64}, {33, 4, 2048}, {1, 4, 4096}, {7, 1, 100}}) {
    const std::string what = "stream_rms_norm " + std::to_string(tokens) + "x" + std::to_string(streams) + "x" +
                             std::to_string(group);
    const Tensor x = random_rounded({tokens, streams * group}, 500, -3.f, 3.f);
    const Tensor w = random_rounded({streams * group}, 501, -0.5f, 0.5f);
    const ops::RmsNormParams params{.eps = 1e-6f, .unit_offset = true};
    Tensor ref = Tensor::host(DType::kF32, x.shape());
    ops::stream_rms_norm(x, w, group, params, ref);
    Tensor out = poisoned(DType::kBF16, x.shape());
    ops::stream_rms_norm(gpu_bf16(x), gpu_copy(w), group, params, out);
    expect_elements_close(*gpu_, out, ref, kBf16Tolerance, what + " bf16");
    Tensor in_place = gpu_copy(x);  // f32, normed where it stands
    ops::stream_rms_norm(in_place, gpu_copy(w), group, params, in_place);
    expect_elements_close(*gpu_, in_place, ref, 1e-5, what + " f32 in place");
  }
}

TEST_F(CudaQwen4ExpOps, GatedStreamMeanAndInject) {
  for (const auto& [tokens, streams, hidden] :
       std::vector<std::tuple<int64_t, int64_t, int64_t>>{{6, 3, 64}, {17, 4, 2048}, {1, 2, 96}}) {
    const std::string shape = std::to_string(tokens) + "x" + std::to_string(streams) + "x" + std::to_string(hidden);
    const Tensor gate = random_rounded({tokens, streams, hidden}, 510, -4.f, 4.f);
    const Tensor normed = random_rounded({tokens, streams, hidden}, 511, -2.f, 2.f);
    Tensor ref = Tensor::host(DType::kF32, {tokens, hidden});
    ops::gated_stream_mean(gate, normed, ref);
    Tensor out = poisoned(DType::kBF16, {tokens, hidden});
    ops::gated_stream_mean(gpu_copy(gate), gpu_bf16(normed), out);
    expect_elements_close(*gpu_, out, ref, kBf16Tolerance, "gated_stream_mean " + shape);

    const Tensor streams0 = random_rounded({tokens, streams, hidden}, 512, -3.f, 3.f);
    const Tensor block_out = random_rounded({tokens, hidden}, 513, -2.f, 2.f);
    const Tensor logits = random_rounded({tokens, streams}, 514, -6.f, 6.f);
    Tensor ref_streams = host_copy(streams0);
    ops::stream_inject(ref_streams, block_out, logits);
    Tensor got = gpu_bf16(streams0);
    ops::stream_inject(got, gpu_bf16(block_out), gpu_copy(logits));
    expect_elements_close(*gpu_, got, ref_streams, kBf16Tolerance, "stream_inject " + shape);
  }
}

TEST_F(CudaQwen4ExpOps, HyperRepeatCopiesIntoEveryStream) {
  const Tensor x = random_rounded({9, 160}, 520, -2.f, 2.f);
  Tensor ref = Tensor::host(DType::kF32, {9, 3, 160});
  ops::hyper_repeat(x, ref);
  Tensor out = poisoned(DType::kBF16, {9, 3, 160});
  ops::hyper_repeat(gpu_bf16(x), out);
  expect_elements_close(*gpu_, out, ref, 1e-7, "hyper_repeat bf16");
}

// Two hash heads per order 2..4 with odd 64-bit multipliers (some past 2^62, so products wrap).
ops::NgramHash test_hash() {
  ops::NgramHash hash{.ngram_size = 4, .heads_per_ngram = 2, .eos_token_id = 2,
                      .multipliers = {1, 0x5DEECE66DLL | 1, 0x7FFFFFFFFFFFFFC5LL, 0x4F1BBCDCBFA53E0BLL}};
  int64_t offset = 0;
  for (int64_t v : {67, 71, 73, 79, 83, 89}) {
    hash.vocab_sizes.push_back(v);
    hash.offsets.push_back(offset);
    offset += v;
  }
  return hash;
}

// Token ids with end-of-sequence ids among them (where n-grams are cut).
Tensor test_tokens(int64_t n, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::vector<int32_t> ids(n);
  for (int32_t& id : ids) id = rng() % 7 == 0 ? 2 : static_cast<int32_t>(rng() % 151000);
  return i32_host({n}, ids);
}

// A carry holding `history` (oldest first, -1 none) as the CPU op writes it.
Tensor carry_of(const ops::NgramHash& hash, const std::vector<int32_t>& history) {
  Tensor carry = Tensor::host(DType::kF32, {hash.carry_elems()});
  for (size_t i = 0; i < history.size(); ++i) {
    carry.data_as<float>()[2 * i] = static_cast<float>((history[i] + 1) / 2048);
    carry.data_as<float>()[2 * i + 1] = static_cast<float>((history[i] + 1) % 2048);
  }
  return carry;
}

TEST_F(CudaQwen4ExpOps, NgramIdsWithCarryAndIntermediates) {
  const ops::NgramHash hash = test_hash();
  const int64_t heads = hash.num_heads(), elems = hash.carry_elems();
  for (const auto& [tokens, history] : std::vector<std::pair<int64_t, std::vector<int32_t>>>{
           {1, {-1, -1, -1}}, {2, {-1, 17, 150999}}, {300, {5, 2, 77}}, {700, {-1, -1, -1}}}) {
    const std::string what = "ngram_ids " + std::to_string(tokens) + " tokens";
    const Tensor ids = test_tokens(tokens, 530 + tokens);
    Tensor ref_carry = carry_of(hash, history), ref = Tensor::host(DType::kI32, {tokens, heads});
    Tensor ref_inter = Tensor::host(DType::kF32, {tokens, elems});
    ops::ngram_ids(hash, {.token_ids = ids, .carry = ref_carry, .out = ref, .intermediate_states = ref_inter});
    Tensor carry = gpu_copy(carry_of(hash, history)), out = poisoned_i32({tokens, heads});
    Tensor inter = poisoned(DType::kF32, {tokens, elems});
    ops::ngram_ids(hash, {.token_ids = gpu_copy(ids), .carry = carry, .out = out, .intermediate_states = inter});
    expect_same_i32(*gpu_, out, ref, what + " ids");
    expect_same_f32(*gpu_, carry, ref_carry, what + " carry");
    expect_same_f32(*gpu_, inter, ref_inter, what + " intermediates");
  }
}

TEST_F(CudaQwen4ExpOps, NgramIdsBatchedSlots) {
  const ops::NgramHash hash = test_hash();
  const int64_t heads = hash.num_heads(), elems = hash.carry_elems(), num_slots = 9;
  const Tensor ids = test_tokens(5, 540);
  const std::vector<int32_t> slots = {7, 0, 3, 8, 4};
  Tensor states = Tensor::host(DType::kF32, {num_slots, elems});
  for (int64_t s = 0; s < num_slots; ++s) {
    const std::vector<int32_t> history = s % 3 == 0 ? std::vector<int32_t>{-1, -1, -1}
                                                    : std::vector<int32_t>{int32_t(s * 1000), 2, int32_t(s * 31 + 5)};
    std::memcpy(states.data_as<float>() + s * elems, carry_of(hash, history).data(), elems * sizeof(float));
  }
  Tensor ref_states = host_copy(states), ref = Tensor::host(DType::kI32, {5, heads});
  ops::ngram_ids(hash, {.token_ids = ids, .carry = ref_states, .out = ref, .state_slots = i32_host({5}, slots)});
  Tensor gpu_states = gpu_copy(states), out = poisoned_i32({5, heads});
  ops::ngram_ids(hash, {.token_ids = gpu_copy(ids), .carry = gpu_states, .out = out,
                        .state_slots = gpu_copy(i32_host({5}, slots))});
  expect_same_i32(*gpu_, out, ref, "ngram_ids batched ids");
  expect_same_f32(*gpu_, gpu_states, ref_states, "ngram_ids batched carries");
}

TEST_F(CudaQwen4ExpOps, PleGate) {
  for (const auto& [tokens, streams, hidden] :
       std::vector<std::tuple<int64_t, int64_t, int64_t>>{{6, 3, 64}, {21, 4, 2048}}) {
    const Tensor key = random_rounded({tokens, streams, hidden}, 550, -2.f, 2.f);
    const Tensor query = random_rounded({tokens, streams, hidden}, 551, -2.f, 2.f);
    const Tensor value = random_rounded({tokens, hidden}, 552, -2.f, 2.f);
    Tensor ref = Tensor::host(DType::kF32, key.shape());
    ops::ple_gate(key, query, value, ref);
    Tensor out = poisoned(DType::kBF16, key.shape());
    ops::ple_gate(gpu_bf16(key), gpu_bf16(query), gpu_bf16(value), out);
    expect_elements_close(*gpu_, out, ref, kBf16Tolerance, "ple_gate " + std::to_string(hidden));
  }
}

// PLE's dilated conv (kernel 4, dilation 3: 10 taps, zeros between) takes the 16-tap CUDA kernel:
// a segment with per-token states, then a batched decode step over slots.
TEST_F(CudaQwen4ExpOps, CausalConv1dDilatedTaps) {
  const int64_t tokens = 23, channels = 384, taps = 10;
  Tensor w = random_rounded({channels, taps}, 580);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t j = 0; j < taps; ++j)
      if (j % 3 != 0) w.data_as<float>()[c * taps + j] = 0.f;
  const Tensor x = random_rounded({tokens, channels}, 581, -2.f, 2.f);
  const Tensor state0 = random_rounded({channels, taps - 1}, 582);
  Tensor ref = Tensor::host(DType::kF32, {tokens, channels}), ref_state = host_copy(state0);
  Tensor ref_inter = Tensor::host(DType::kF32, {tokens, channels, taps - 1});
  ops::causal_conv1d({.x = x, .weight = w, .conv_state = ref_state, .out = ref, .intermediate_states = ref_inter,
                      .silu = false});
  Tensor gx = gpu_bf16(x), state = gpu_copy(state0), gw = gpu_copy(w);
  Tensor inter = poisoned(DType::kF32, {tokens, channels, taps - 1}), out = poisoned(DType::kBF16, {tokens, channels});
  ops::causal_conv1d({.x = gx, .weight = gw, .conv_state = state, .out = out, .intermediate_states = inter,
                      .silu = false});
  expect_elements_close(*gpu_, out, ref, kBf16Tolerance, "causal_conv1d 10 taps out");
  expect_same_f32(*gpu_, state, ref_state, "causal_conv1d 10 taps state");
  expect_same_f32(*gpu_, inter, ref_inter, "causal_conv1d 10 taps intermediates");

  const int64_t num_slots = 5;
  const Tensor states0 = random_rounded({num_slots, channels, taps - 1}, 583);
  const Tensor xs = random_rounded({3, channels}, 584, -2.f, 2.f);
  const Tensor slots = i32_host({3}, {4, 0, 2});
  Tensor ref_states = host_copy(states0), ref_out = Tensor::host(DType::kF32, {3, channels});
  ops::causal_conv1d({.x = xs, .weight = w, .conv_state = ref_states, .out = ref_out, .silu = false,
                      .state_slots = slots});
  Tensor states = gpu_copy(states0), outs = poisoned(DType::kBF16, {3, channels});
  ops::causal_conv1d({.x = gpu_bf16(xs), .weight = gw, .conv_state = states, .out = outs, .silu = false,
                      .state_slots = gpu_copy(slots)});
  expect_elements_close(*gpu_, outs, ref_out, kBf16Tolerance, "causal_conv1d 10 taps batched out");
  expect_same_f32(*gpu_, states, ref_states, "causal_conv1d 10 taps batched states");
}

// Three sequences in scattered paged blocks of 16: a prefill chunk after 32 cached tokens, a
// whole 9-token prompt and one decode token at position 69.
struct PagedRows {
  static constexpr int64_t kBlockSize = 16, kNumBlocks = 12, kWidth = 80;
  std::vector<int32_t> cu = {0, 5, 14, 15}, kv_lens = {37, 9, 70};
  std::vector<int32_t> tables = {3, 9, 0, -1, -1, 7, -1, -1, -1, -1, 11, 1, 5, 2, 8};  // [3, 5]
  int64_t num_tokens() const { return cu.back(); }
  ops::AttentionMetadata host() const {
    return {.cu_seqlens = i32_host({4}, cu), .kv_lens = i32_host({3}, kv_lens),
            .block_tables = i32_host({3, 5}, tables), .num_rows = 3, .max_q_len = 9, .max_kv_len = 70};
  }
  ops::AttentionMetadata device(Backend& gpu) const {
    ops::AttentionMetadata m = host();
    m.cu_seqlens = gpu.from_host(m.cu_seqlens), m.kv_lens = gpu.from_host(m.kv_lens);
    m.block_tables = gpu.from_host(m.block_tables);
    return m;
  }
};

TEST_F(CudaQwen4ExpOps, StoreRowPartAndMeanRowWindows) {
  const PagedRows paged;
  const int64_t num_slots = PagedRows::kNumBlocks * PagedRows::kBlockSize;
  const Tensor rows0 = random_rounded({num_slots, PagedRows::kWidth}, 560, -1.f, 1.f);
  const Tensor src = random_rounded({6, 16}, 561, -3.f, 3.f);
  const Tensor slots = i32_host({6}, {17, -1, 190, 0, 55, 101});  // -1: a padding row, skipped
  Tensor ref_rows = host_copy(rows0), rows = gpu_copy(rows0);
  ops::store_row_part(src, slots, 64, ref_rows);
  ops::store_row_part(gpu_copy(src), gpu_copy(slots), 64, rows);
  expect_same_f32(*gpu_, rows, ref_rows, "store_row_part");

  const Tensor windows = i32_host({3, 4}, {17, 18, 19, 20, 0, 190, 55, 3, 101, 102, 103, 104});
  Tensor ref = Tensor::host(DType::kF32, {3, 16});
  ops::mean_row_windows(ref_rows, windows, 64, ref);
  Tensor out = poisoned(DType::kF32, {3, 16});
  ops::mean_row_windows(rows, gpu_copy(windows), 64, out);
  expect_elements_close(*gpu_, out, ref, 1e-6, "mean_row_windows");
}

// The indexer's top-k over block keys in V rows (column 64, 16 wide, rate 4) and the QSA
// attention over the blocks it picks. Inputs are bf16-rounded f32, so every product is exact
// and the scores, summed in the same order, are the CPU's to the bit: the picks match exactly.
TEST_F(CudaQwen4ExpOps, IndexerTopKAndBlockSparseAttention) {
  const PagedRows paged;
  const int64_t t = paged.num_tokens(), num_slots = PagedRows::kNumBlocks * PagedRows::kBlockSize;
  const int64_t index_heads = 4, index_dim = 16, rate = 4, column = 64;
  const Tensor k_rows = random_rounded({num_slots, PagedRows::kWidth}, 570, -1.f, 1.f);
  const Tensor v_rows = random_rounded({num_slots, PagedRows::kWidth}, 571, -1.f, 1.f);
  const Tensor index_q = random_rounded({t, index_heads, index_dim}, 572, -1.f, 1.f);
  const Tensor gk = gpu_copy(k_rows), gv = gpu_copy(v_rows);
  for (int64_t top_k : {2, 3, 20}) {
    const std::string what = "top_k " + std::to_string(top_k);
    ops::IndexerParams params{.head_dim = index_dim, .block_size = PagedRows::kBlockSize, .rate = rate,
                              .entry_offset = column, .top_k = top_k, .scale = 0.25f};
    Tensor selected = Tensor::host(DType::kI32, {t, top_k});
    ops::indexer_top_k(index_q, Tensor(), v_rows, paged.host(), params, selected);
    params.scores = poisoned(DType::kF32, {t, 70 / rate});
    Tensor got = poisoned_i32({t, top_k});
    ops::indexer_top_k(gpu_copy(index_q), Tensor(), gv, paged.device(*gpu_), params, got);
    expect_same_i32(*gpu_, got, selected, "indexer_top_k " + what);

    const int64_t heads = 4, kv_heads = 2, dim = 32;  // K rows: [2 heads of 32 | index key]
    const Tensor q = random_rounded({t, heads, dim}, 573 + top_k, -1.f, 1.f);
    const ops::BlockSparseAttentionParams attention{.num_kv_heads = kv_heads, .head_dim = dim,
                                                    .block_size = PagedRows::kBlockSize, .rate = rate,
                                                    .scale = 1.0f / std::sqrt(32.0f), .selected = selected};
    Tensor ref = Tensor::host(DType::kF32, {t, heads, dim});
    ops::block_sparse_attention(q, k_rows, v_rows, paged.host(), attention, ref);
    ops::BlockSparseAttentionParams on_gpu = attention;
    on_gpu.selected = gpu_copy(selected);
    Tensor out = poisoned(DType::kF32, {t, heads, dim});
    ops::block_sparse_attention(gpu_copy(q), gk, gv, paged.device(*gpu_), on_gpu, out);
    expect_elements_close(*gpu_, out, ref, 1e-5, "block_sparse_attention " + what);
  }
}

}  // namespace
}  // namespace strata::test
