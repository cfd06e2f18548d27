// CPU paged attention against a double-precision reference that reads the same cache:
// GQA, shuffled block tables, a decode row and a prefill chunk in one step, head sizes with
// and without a SIMD tail, sliding window, sinks and logit softcap, and bidirectional rows.
#include "strata/ops/paged_attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "test_support.h"

namespace strata::cpu {
namespace {

struct AttentionCase {
  int64_t num_heads = 6, num_kv_heads = 2, head_dim = 64, block_size = 4, num_blocks = 24;
  std::vector<int32_t> q_lens = {1, 5};
  std::vector<int32_t> kv_lens = {37, 20};
};

Tensor i32(const std::vector<int32_t>& v, Shape shape) {
  Tensor t = Tensor::host(DType::kI32, shape);
  std::copy(v.begin(), v.end(), t.data_as<int32_t>());
  return t;
}

// out[t, h, :] in double over the keys query t may see.
std::vector<double> reference(const AttentionCase& s, const Tensor& q, const Tensor& kc, const Tensor& vc,
                              const std::vector<int32_t>& tables, int64_t max_blocks,
                              const ops::AttentionParams& p) {
  std::vector<double> out(q.numel());
  const int64_t hd = s.head_dim;
  int64_t t = 0;
  for (size_t r = 0; r < s.q_lens.size(); ++r) {
    for (int32_t i = 0; i < s.q_lens[r]; ++i, ++t) {
      const int64_t pos = s.kv_lens[r] - s.q_lens[r] + i;
      const int64_t first = p.sliding_window > 0 ? std::max<int64_t>(0, pos - p.sliding_window + 1) : 0;
      const int64_t last = p.causal ? pos
                           : p.sliding_window > 0 ? std::min<int64_t>(s.kv_lens[r] - 1, pos + p.sliding_window - 1)
                                                  : s.kv_lens[r] - 1;
      for (int64_t h = 0; h < s.num_heads; ++h) {
        const int64_t kvh = h / (s.num_heads / s.num_kv_heads);
        const float* qv = q.data_as<float>() + (t * s.num_heads + h) * hd;
        std::vector<double> w;
        double mx = p.sinks.defined() ? p.sinks.data_as<float>()[h] : -INFINITY;
        for (int64_t k = first; k <= last; ++k) {
          const int64_t slot = tables[r * max_blocks + k / s.block_size] * s.block_size + k % s.block_size;
          double dot = 0;
          for (int64_t d = 0; d < hd; ++d) dot += double(qv[d]) * kc.data_as<float>()[(slot * s.num_kv_heads + kvh) * hd + d];
          dot *= p.scale;
          if (p.logit_softcap > 0) dot = p.logit_softcap * std::tanh(dot / p.logit_softcap);
          w.push_back(dot);
          mx = std::max(mx, dot);
        }
        double denom = p.sinks.defined() ? std::exp(p.sinks.data_as<float>()[h] - mx) : 0.0;
        for (double& x : w) denom += (x = std::exp(x - mx));
        for (int64_t k = first; k <= last; ++k) {
          const int64_t slot = tables[r * max_blocks + k / s.block_size] * s.block_size + k % s.block_size;
          for (int64_t d = 0; d < hd; ++d)
            out[(t * s.num_heads + h) * hd + d] +=
                w[k - first] / denom * vc.data_as<float>()[(slot * s.num_kv_heads + kvh) * hd + d];
        }
      }
    }
  }
  return out;
}

void check(const AttentionCase& s, const ops::AttentionParams& params) {
  SCOPED_TRACE(testing::Message() << "head_dim=" << s.head_dim << " window=" << params.sliding_window
                                  << " softcap=" << params.logit_softcap << " sinks=" << params.sinks.defined()
                                  << " causal=" << params.causal);
  const int64_t num_tokens = s.q_lens[0] + s.q_lens[1];
  const Shape cache_shape{s.num_blocks, s.block_size, s.num_kv_heads, s.head_dim};
  const Tensor kc = test::random_f32(cache_shape, 1), vc = test::random_f32(cache_shape, 2);
  const Tensor q = test::random_f32({num_tokens, s.num_heads, s.head_dim}, 3, -2.f, 2.f);
  // Row 0 takes blocks 23, 21, 19, ... and row 1 takes 0, 2, 4, ...: neither is contiguous.
  const int64_t max_blocks = 10;
  std::vector<int32_t> tables(2 * max_blocks, 0);
  for (int64_t b = 0; b < max_blocks; ++b) {
    tables[b] = static_cast<int32_t>(23 - 2 * b);
    tables[max_blocks + b] = static_cast<int32_t>(2 * b);
  }
  const ops::AttentionMetadata meta{.cu_seqlens = i32({0, s.q_lens[0], static_cast<int32_t>(num_tokens)}, {3}),
                                    .kv_lens = i32(s.kv_lens, {2}),
                                    .block_tables = i32(tables, {2, max_blocks}),
                                    .num_rows = 2, .max_q_len = 5, .max_kv_len = 37};
  Tensor out = Tensor::host(DType::kF32, q.shape());
  cpu::paged_attention(q, kc, vc, meta, params, out);
  const std::vector<double> ref = reference(s, q, kc, vc, tables, max_blocks, params);
  for (int64_t i = 0; i < out.numel(); ++i) ASSERT_NEAR(out.data_as<float>()[i], ref[i], 2e-5) << "i=" << i;
}

TEST(PagedAttentionCpuTest, MatchesReference) {
  AttentionCase s;
  for (int64_t head_dim : {64, 20}) {
    s.head_dim = head_dim;
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    check(s, {.scale = scale});
    check(s, {.scale = scale, .sliding_window = 7});
    check(s, {.scale = scale, .logit_softcap = 5.0f});
    check(s, {.scale = scale, .sinks = test::random_f32({s.num_heads}, 4)});
  }
}

// Encoders: a row that is a whole sequence, each query seeing keys after it too.
TEST(PagedAttentionCpuTest, BidirectionalRowsSeeEveryKey) {
  AttentionCase s{.q_lens = {5, 9}, .kv_lens = {5, 9}};
  check(s, {.scale = 0.125f, .causal = false});
  s.head_dim = 20;
  check(s, {.scale = 0.2f, .causal = false});
}

// ModernBERT's local layers: a query sees the keys within window - 1 of it, before and after.
TEST(PagedAttentionCpuTest, BidirectionalSlidingWindowSeesBothSides) {
  const AttentionCase s{.q_lens = {5, 20}, .kv_lens = {5, 20}};
  check(s, {.scale = 0.125f, .sliding_window = 3, .causal = false});
  check(s, {.scale = 0.125f, .sliding_window = 9, .causal = false});  // wider than row 0
}

// --kv-cache-dtype fp8: store_kv narrows to e4m3 (nearest even, +-448 at most) and attention
// over the codes equals attention over an f32 cache holding the same values, bit for bit.
TEST(PagedAttentionCpuTest, E4m3CacheEqualsF32CacheOfTheSameValues) {
  const Shape cache_shape{4, 4, 2, 32};
  Tensor k = test::random_f32({5, 2, 32}, 5, -3.f, 3.f), v = test::random_f32({5, 2, 32}, 6, -3.f, 3.f);
  k.data_as<float>()[0] = 1000.0f, k.data_as<float>()[1] = -0.0625f * 1.0625f;  // saturates; a midpoint
  const Tensor slots = i32({3, 7, 8, 12, 1}, {5});
  Tensor kc8 = Tensor::host(DType::kF8_E4M3, cache_shape), vc8 = Tensor::host(DType::kF8_E4M3, cache_shape);
  std::fill_n(kc8.data_as<uint8_t>(), kc8.numel(), 0), std::fill_n(vc8.data_as<uint8_t>(), vc8.numel(), 0);
  cpu::store_kv(k, v, slots, kc8, vc8);
  EXPECT_EQ(kc8.data_as<uint8_t>()[3 * 64], 0x7e);      // 448
  EXPECT_EQ(kc8.data_as<uint8_t>()[3 * 64 + 1], 0x98);  // -0.0664 (a midpoint) rounds to even -0.0625
  Tensor kc = Tensor::host(DType::kF32, cache_shape), vc = Tensor::host(DType::kF32, cache_shape);
  for (int64_t i = 0; i < kc.numel(); ++i) {
    kc.data_as<float>()[i] = fp8_e4m3_to_f32(kc8.data_as<uint8_t>()[i]);
    vc.data_as<float>()[i] = fp8_e4m3_to_f32(vc8.data_as<uint8_t>()[i]);
  }
  const Tensor q = test::random_f32({3, 4, 32}, 7, -2.f, 2.f);
  const ops::AttentionMetadata meta{.cu_seqlens = i32({0, 1, 3}, {3}), .kv_lens = i32({13, 5}, {2}),
                                    .block_tables = i32({0, 1, 2, 3, 0, 1, 2, 3}, {2, 4}),
                                    .num_rows = 2, .max_q_len = 2, .max_kv_len = 13};
  Tensor out8 = Tensor::host(DType::kF32, q.shape()), out = Tensor::host(DType::kF32, q.shape());
  cpu::paged_attention(q, kc8, vc8, meta, {.scale = 0.17f}, out8);
  cpu::paged_attention(q, kc, vc, meta, {.scale = 0.17f}, out);
  for (int64_t i = 0; i < out.numel(); ++i) ASSERT_EQ(out8.data_as<float>()[i], out.data_as<float>()[i]) << i;
}

}  // namespace
}  // namespace strata::cpu
