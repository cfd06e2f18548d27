// store_kv and paged attention on CUDA against the CPU op: decode batches (split-KV),
// long prefills, chunked prefill and mixed steps, GQA groups of 1 to 8 (and 7), head dims
// 32 to 256, sliding windows, logit softcap and sinks. The cache is random everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "ops/cuda_op_support.h"
#include "strata/ops/paged_attention.h"

namespace strata::test {
namespace {

struct RowSpec {
  int32_t q_len, kv_len;
};

struct AttnCase {
  int64_t q_heads, kv_heads, head_dim;
  std::vector<RowSpec> rows;
  int64_t sliding_window = 0;
  float softcap = 0.0f;
  bool sinks = false;
  bool fp8 = false;  // e4m3 caches (--kv-cache-dtype fp8)
  bool causal = true;
};

// The f32 cache as e4m3 codes (every value already on the e4m3 grid after this).
Tensor to_e4m3(const Tensor& f32) {
  Tensor codes = Tensor::host(DType::kF8_E4M3, f32.shape());
  for (int64_t i = 0; i < f32.numel(); ++i) codes.data_as<uint8_t>()[i] = f32_to_fp8_e4m3(f32.data_as<float>()[i]);
  return codes;
}

constexpr int64_t kBlockSize = 16;

// Host metadata of a step: rows' blocks are a shuffled slice of the pool.
struct HostStep {
  Tensor cu_seqlens, kv_lens, block_tables, slot_mapping;
  int64_t num_tokens = 0, num_blocks = 0, max_q_len = 0, max_kv_len = 0;
};

HostStep make_step(const std::vector<RowSpec>& rows) {
  HostStep s;
  int64_t max_blocks = 1;
  for (const RowSpec& r : rows) max_blocks = std::max<int64_t>(max_blocks, (r.kv_len + kBlockSize - 1) / kBlockSize);
  s.num_blocks = max_blocks * static_cast<int64_t>(rows.size()) + 3;
  std::vector<int32_t> perm(s.num_blocks);
  std::iota(perm.begin(), perm.end(), 0);
  std::reverse(perm.begin(), perm.end());
  std::rotate(perm.begin(), perm.begin() + s.num_blocks / 3, perm.end());
  std::vector<int32_t> cu{0}, kv, tables, slots;
  int64_t next = 0;
  for (const RowSpec& r : rows) {
    std::vector<int32_t> table(max_blocks, 0);
    for (int64_t b = 0; b < (r.kv_len + kBlockSize - 1) / kBlockSize; ++b) table[b] = perm[next++];
    tables.insert(tables.end(), table.begin(), table.end());
    for (int32_t i = 0; i < r.q_len; ++i) {
      const int32_t pos = r.kv_len - r.q_len + i;
      slots.push_back(static_cast<int32_t>(table[pos / kBlockSize] * kBlockSize + pos % kBlockSize));
    }
    cu.push_back(cu.back() + r.q_len);
    kv.push_back(r.kv_len);
    s.max_q_len = std::max<int64_t>(s.max_q_len, r.q_len);
    s.max_kv_len = std::max<int64_t>(s.max_kv_len, r.kv_len);
  }
  s.num_tokens = cu.back();
  s.cu_seqlens = int_tensor(cu);
  s.kv_lens = int_tensor(kv);
  s.slot_mapping = int_tensor(slots);
  s.block_tables = int_tensor(tables).reshape({static_cast<int64_t>(rows.size()), max_blocks});
  return s;
}

class CudaAttention : public CudaOpTest {
 protected:
  void run_case(const AttnCase& c, uint64_t seed);
};

void CudaAttention::run_case(const AttnCase& c, uint64_t seed) {
  const HostStep s = make_step(c.rows);
  const int64_t t = s.num_tokens, hq = c.q_heads, hkv = c.kv_heads, d = c.head_dim;
  const Shape cache_shape{s.num_blocks, kBlockSize, hkv, d};
  Tensor k_cache = random_rounded(cache_shape, seed, -2.f, 2.f);
  Tensor v_cache = random_rounded(cache_shape, seed + 1, -2.f, 2.f);
  if (c.fp8) k_cache = to_e4m3(k_cache), v_cache = to_e4m3(v_cache);
  Tensor gk_cache = c.fp8 ? gpu_copy(k_cache) : gpu_bf16(k_cache), gv_cache = c.fp8 ? gpu_copy(v_cache) : gpu_bf16(v_cache);
  const Tensor q = random_rounded({t, hq, d}, seed + 2, -2.f, 2.f);
  const Tensor k = random_rounded({t, hkv, d}, seed + 3, -2.f, 2.f);
  const Tensor v = random_rounded({t, hkv, d}, seed + 4, -2.f, 2.f);
  ops::store_kv(k, v, s.slot_mapping, k_cache, v_cache);
  ops::store_kv(gpu_bf16(k), gpu_bf16(v), gpu_copy(s.slot_mapping), gk_cache, gv_cache);
  if (c.fp8) {  // the same codes, byte for byte
    const Tensor hk = gpu_->to_host(gk_cache), hv = gpu_->to_host(gv_cache);
    EXPECT_EQ(std::memcmp(hk.data(), k_cache.data(), k_cache.nbytes()), 0) << "store_kv k (e4m3)";
    EXPECT_EQ(std::memcmp(hv.data(), v_cache.data(), v_cache.nbytes()), 0) << "store_kv v (e4m3)";
  } else {
    EXPECT_EQ(compare(as_f32_host(*gpu_, gk_cache), k_cache).rel_l2, 0.0) << "store_kv k";
    EXPECT_EQ(compare(as_f32_host(*gpu_, gv_cache), v_cache).rel_l2, 0.0) << "store_kv v";
  }
  const Tensor sinks = random_rounded({hq}, seed + 5, -1.f, 3.f);
  ops::AttentionParams params{.scale = 1.0f / std::sqrt(static_cast<float>(d)),
                              .sliding_window = c.sliding_window, .logit_softcap = c.softcap,
                              .sinks = c.sinks ? sinks : Tensor(), .causal = c.causal};
  const ops::AttentionMetadata meta{.cu_seqlens = s.cu_seqlens, .kv_lens = s.kv_lens,
                                    .block_tables = s.block_tables, .num_rows = static_cast<int64_t>(c.rows.size()),
                                    .max_q_len = s.max_q_len, .max_kv_len = s.max_kv_len};
  Tensor ref = Tensor::host(DType::kF32, {t, hq, d});
  ops::paged_attention(q, k_cache, v_cache, meta, params, ref);
  ops::AttentionMetadata gmeta = meta;
  gmeta.cu_seqlens = gpu_copy(s.cu_seqlens);
  gmeta.kv_lens = gpu_copy(s.kv_lens);
  gmeta.block_tables = gpu_copy(s.block_tables);
  ops::AttentionParams gparams = params;
  if (c.sinks) gparams.sinks = gpu_copy(sinks);
  Tensor out = poisoned(DType::kBF16, {t, hq, d});
  ops::paged_attention(gpu_bf16(q), gk_cache, gv_cache, gmeta, gparams, out);
  expect_close(*gpu_, out, ref, kBf16Tolerance,
               std::string(c.fp8 ? "e4m3 " : "") + (c.causal ? "" : "bidirectional ") + "attention hq=" + std::to_string(hq) + " hkv=" + std::to_string(hkv) + " d=" + std::to_string(d) +
                   " rows=" + std::to_string(c.rows.size()) + " max_q=" + std::to_string(s.max_q_len) +
                   " max_kv=" + std::to_string(s.max_kv_len));
}

TEST_F(CudaAttention, DecodeBatchesSplitTheKeys) {
  const std::vector<RowSpec> rows{{1, 1}, {1, 17}, {1, 300}, {1, 1000}, {1, 4000}};
  run_case({.q_heads = 32, .kv_heads = 8, .head_dim = 128, .rows = rows}, 100);   // Llama-3.1-8B
  run_case({.q_heads = 32, .kv_heads = 4, .head_dim = 128, .rows = rows}, 110);   // Qwen3-30B-A3B
  run_case({.q_heads = 16, .kv_heads = 2, .head_dim = 256, .rows = rows}, 120);   // Qwen3-Next
  run_case({.q_heads = 28, .kv_heads = 4, .head_dim = 128, .rows = rows}, 130);   // group of 7
  run_case({.q_heads = 4, .kv_heads = 2, .head_dim = 32, .rows = rows}, 140);     // the fixtures
  run_case({.q_heads = 8, .kv_heads = 8, .head_dim = 64, .rows = {{1, 1024}}}, 150);
  std::vector<RowSpec> many(64, RowSpec{1, 0});
  for (size_t i = 0; i < many.size(); ++i) many[i].kv_len = static_cast<int32_t>(1 + (i * 37) % 700);
  run_case({.q_heads = 32, .kv_heads = 8, .head_dim = 128, .rows = many}, 160);
}

TEST_F(CudaAttention, DecodeWindowSoftcapSinksAndLongContext) {
  const std::vector<RowSpec> rows{{1, 5}, {1, 130}, {1, 700}, {1, 3001}};
  run_case({.q_heads = 8, .kv_heads = 4, .head_dim = 64, .rows = rows, .sliding_window = 64}, 170);
  run_case({.q_heads = 32, .kv_heads = 8, .head_dim = 128, .rows = rows, .softcap = 5.0f}, 171);
  run_case({.q_heads = 64, .kv_heads = 8, .head_dim = 64, .rows = rows, .sliding_window = 128, .sinks = true}, 172);
  run_case({.q_heads = 32, .kv_heads = 2, .head_dim = 128, .rows = rows}, 173);  // group of 16
  run_case({.q_heads = 32, .kv_heads = 8, .head_dim = 128, .rows = {{1, 20000}}}, 174);
  run_case({.q_heads = 16, .kv_heads = 2, .head_dim = 256, .rows = {{1, 9000}, {1, 2}}}, 175);
}

TEST_F(CudaAttention, PrefillChunkedAndMixedSteps) {
  run_case({.q_heads = 32, .kv_heads = 8, .head_dim = 128, .rows = {{600, 600}}}, 200);  // no split
  run_case({.q_heads = 32, .kv_heads = 8, .head_dim = 128, .rows = {{100, 357}}}, 210);  // a chunk
  run_case({.q_heads = 32, .kv_heads = 4, .head_dim = 128, .rows = {{200, 200}, {1, 50}, {64, 130}, {1, 1}}}, 220);
  run_case({.q_heads = 16, .kv_heads = 2, .head_dim = 256, .rows = {{77, 77}, {5, 90}}}, 230);
  run_case({.q_heads = 28, .kv_heads = 4, .head_dim = 128, .rows = {{45, 45}, {3, 20}}}, 240);
  run_case({.q_heads = 4, .kv_heads = 2, .head_dim = 32, .rows = {{24, 24}, {7, 7}, {40, 40}}}, 250);
  run_case({.q_heads = 12, .kv_heads = 4, .head_dim = 96, .rows = {{33, 33}, {1, 9}}}, 260);
  // MLA expanded per head: DeepSeek-V3's 128 heads of 192, and the fixtures' 4 of 48.
  run_case({.q_heads = 128, .kv_heads = 128, .head_dim = 192, .rows = {{40, 40}, {1, 300}, {3, 70}}}, 270);
  run_case({.q_heads = 4, .kv_heads = 4, .head_dim = 48, .rows = {{24, 24}, {1, 7}, {40, 40}}}, 280);
}

TEST_F(CudaAttention, SlidingWindowSoftcapAndSinks) {
  const std::vector<RowSpec> rows{{150, 150}, {1, 300}, {20, 90}};
  run_case({.q_heads = 8, .kv_heads = 4, .head_dim = 64, .rows = rows, .sliding_window = 64}, 300);
  run_case({.q_heads = 8, .kv_heads = 4, .head_dim = 64, .rows = rows, .softcap = 5.0f}, 310);
  run_case({.q_heads = 8, .kv_heads = 4, .head_dim = 64, .rows = rows, .sinks = true}, 320);
  run_case({.q_heads = 64, .kv_heads = 8, .head_dim = 64, .rows = rows, .sliding_window = 128, .sinks = true},
           330);  // gpt-oss shapes
  run_case({.q_heads = 8, .kv_heads = 4, .head_dim = 256, .rows = {{1, 2000}}, .sliding_window = 1024}, 340);
}

// Encoders: whole sequences, every query sees every key of its row (tiles past the diagonal too).
TEST_F(CudaAttention, BidirectionalWholeRowsMatchCpu) {
  run_case({.q_heads = 12, .kv_heads = 12, .head_dim = 64, .rows = {{128, 128}, {7, 7}, {300, 300}}, .causal = false},
           350);  // BERT-base
  run_case({.q_heads = 16, .kv_heads = 16, .head_dim = 64, .rows = {{1, 1}, {65, 65}, {512, 512}}, .causal = false},
           360);  // BERT-large
  run_case({.q_heads = 4, .kv_heads = 2, .head_dim = 32, .rows = {{24, 24}, {40, 40}}, .fp8 = true, .causal = false},
           370);
}

// ModernBERT's local layers: keys within window - 1 on both sides, windows narrower and wider
// than a 64-key tile, rows shorter than the window.
TEST_F(CudaAttention, BidirectionalSlidingWindowMatchesCpu) {
  run_case({.q_heads = 12, .kv_heads = 12, .head_dim = 64, .rows = {{300, 300}, {7, 7}, {130, 130}},
            .sliding_window = 65, .causal = false},
           380);  // ModernBERT-base: local_attention 128
  run_case({.q_heads = 4, .kv_heads = 4, .head_dim = 32, .rows = {{1, 1}, {200, 200}}, .sliding_window = 9,
            .causal = false},
           390);
}

// --kv-cache-dtype fp8: e4m3 caches through decode (split keys, every head size the decode
// kernel has), prefill, chunked and mixed steps, windows and sinks.
TEST_F(CudaAttention, Fp8CacheDecodeAndPrefillMatchCpu) {
  const std::vector<RowSpec> decode{{1, 1}, {1, 17}, {1, 300}, {1, 4000}};
  run_case({.q_heads = 32, .kv_heads = 8, .head_dim = 128, .rows = decode, .fp8 = true}, 400);
  run_case({.q_heads = 16, .kv_heads = 2, .head_dim = 256, .rows = decode, .fp8 = true}, 410);
  run_case({.q_heads = 64, .kv_heads = 8, .head_dim = 64, .rows = decode, .sliding_window = 128, .sinks = true,
            .fp8 = true}, 420);
  run_case({.q_heads = 32, .kv_heads = 8, .head_dim = 128, .rows = {{600, 600}}, .fp8 = true}, 430);
  run_case({.q_heads = 32, .kv_heads = 4, .head_dim = 128, .rows = {{200, 200}, {1, 50}, {64, 130}, {1, 1}},
            .fp8 = true}, 440);
  run_case({.q_heads = 16, .kv_heads = 2, .head_dim = 256, .rows = {{77, 77}, {5, 90}}, .fp8 = true}, 450);
  run_case({.q_heads = 4, .kv_heads = 2, .head_dim = 32, .rows = {{24, 24}, {7, 7}, {40, 40}}, .fp8 = true}, 460);
  run_case({.q_heads = 12, .kv_heads = 4, .head_dim = 96, .rows = {{33, 33}, {1, 9}}, .fp8 = true}, 470);
  run_case({.q_heads = 4, .kv_heads = 4, .head_dim = 48, .rows = {{24, 24}, {1, 7}, {40, 40}}, .fp8 = true}, 480);
  run_case({.q_heads = 8, .kv_heads = 4, .head_dim = 64, .rows = {{150, 150}, {1, 300}, {20, 90}},
            .softcap = 5.0f, .fp8 = true}, 490);
  std::vector<RowSpec> batch;  // a decode batch: few splits a row, long rings
  for (int i = 0; i < 24; ++i) batch.push_back({1, 1 + 173 * i});
  run_case({.q_heads = 32, .kv_heads = 8, .head_dim = 128, .rows = batch, .fp8 = true}, 500);
  run_case({.q_heads = 64, .kv_heads = 8, .head_dim = 64, .rows = batch, .fp8 = true}, 510);
  run_case({.q_heads = 16, .kv_heads = 2, .head_dim = 256, .rows = batch, .fp8 = true}, 520);
}

}  // namespace
}  // namespace strata::test
