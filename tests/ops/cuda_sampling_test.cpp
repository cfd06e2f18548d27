// The CUDA sampling op against the CPU op on random bf16-valued logits (many ties) of real
// vocab sizes, mixed parameters per row, shared logits rows (n > 1) and penalties: tokens
// must match on at least 99.5% of rows (they share one definition; only float rounding at a
// boundary may differ), logprobs within 1e-4.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ops/cuda_op_support.h"
#include "strata/ops/sampling.h"

namespace strata {
namespace {

using ops::kMaxTopLogprobs;

class CudaSampling : public test::CudaOpTest {};

struct Batch {
  std::vector<ops::SamplingRow> rows;
  std::vector<ops::PenaltyToken> penalties;
  int32_t num_penalized = 0;
};

Batch make_batch(int64_t num_rows, int64_t num_logits, int64_t vocab, uint64_t seed) {
  Batch b;
  std::mt19937_64 rng(seed);
  for (int64_t r = 0; r < num_rows; ++r) {
    ops::SamplingRow row{.logits_row = static_cast<int32_t>(r % num_logits), .random_bits = static_cast<uint32_t>(rng())};
    switch (r % 8) {
      case 0: row.temperature = 0.0f; break;
      case 1: row.temperature = 1.0f; break;
      case 2: row.temperature = 0.7f; row.top_k = 50; break;
      case 3: row.temperature = 0.8f; row.top_p = 0.9f; break;
      case 4: row.temperature = 1.2f; row.min_p = 0.05f; break;
      case 5: row.temperature = 0.6f; row.top_k = 1000; row.top_p = 0.95f; row.min_p = 0.01f; break;
      case 6: row.temperature = 5.0f; row.top_p = 0.3f; break;
      default: row.temperature = 1.0f; row.top_k = 7; break;
    }
    if (r % 3 == 0) row.num_top_logprobs = static_cast<int32_t>(1 + r % kMaxTopLogprobs);
    if (r % 5 == 1) {
      row.repetition_penalty = 1.3f;
      row.presence_penalty = 0.5f;
      row.frequency_penalty = 0.25f;
      row.penalty_begin = static_cast<int32_t>(b.penalties.size());
      for (int32_t j = 0; j < 40; ++j)
        b.penalties.push_back({.token_id = static_cast<int32_t>((j * 7919 + r) % vocab), .output_count = j % 3});
      row.num_penalty_tokens = 40;  // distinct: 7919 is prime and divides no vocab here
      row.penalized_row = b.num_penalized++;
    }
    b.rows.push_back(row);
  }
  return b;
}

void run_case(Backend& gpu, int64_t num_rows, int64_t num_logits, int64_t vocab, uint64_t seed) {
  const Tensor logits = test::random_rounded({num_logits, vocab}, seed, -12.0f, 12.0f);
  Batch b = make_batch(num_rows, num_logits, vocab, seed);
  const int64_t num_pen = static_cast<int64_t>(b.penalties.size());
  const Tensor rows = Tensor::view(b.rows.data(), DType::kI32, {num_rows, ops::kSamplingRowWords});
  const Tensor pens = num_pen ? Tensor::view(b.penalties.data(), DType::kI32, {num_pen, 2}) : Tensor();
  ops::SamplingArgs cpu{.logits = logits, .rows = rows, .penalty_tokens = pens,
                        .token_ids = Tensor::host(DType::kI32, {num_rows}),
                        .logprobs = Tensor::host(DType::kF32, {num_rows}),
                        .top_ids = Tensor::host(DType::kI32, {num_rows, kMaxTopLogprobs}),
                        .top_logprobs = Tensor::host(DType::kF32, {num_rows, kMaxTopLogprobs})};
  ops::sample_tokens(cpu);
  auto poisoned = [&](DType dtype, Shape shape) {
    Tensor t = gpu.empty(dtype, shape);
    gpu.fill_bytes(t, 0xFF);
    return t;
  };
  ops::SamplingArgs dev{.logits = gpu.from_host(logits), .rows = gpu.from_host(rows),
                        .penalty_tokens = num_pen ? gpu.from_host(pens) : Tensor(),
                        .penalized = b.num_penalized ? poisoned(DType::kF32, {b.num_penalized, vocab}) : Tensor(),
                        .token_ids = poisoned(DType::kI32, {num_rows}), .logprobs = poisoned(DType::kF32, {num_rows}),
                        .top_ids = poisoned(DType::kI32, {num_rows, kMaxTopLogprobs}),
                        .top_logprobs = poisoned(DType::kF32, {num_rows, kMaxTopLogprobs})};
  ops::sample_tokens(dev);
  const Tensor ids = gpu.to_host(dev.token_ids), lps = gpu.to_host(dev.logprobs);
  const Tensor top_ids = gpu.to_host(dev.top_ids), top_lps = gpu.to_host(dev.top_logprobs);
  int64_t same = 0;
  for (int64_t r = 0; r < num_rows; ++r) {
    const int32_t want = cpu.token_ids.data_as<int32_t>()[r], got = ids.data_as<int32_t>()[r];
    ASSERT_TRUE(got >= 0 && got < vocab) << "row " << r << " token " << got;
    if (got != want) continue;
    ++same;
    EXPECT_NEAR(lps.data_as<float>()[r], cpu.logprobs.data_as<float>()[r], 1e-4) << "row " << r;
    for (int32_t j = 0; j < b.rows[r].num_top_logprobs; ++j) {
      const int64_t at = r * kMaxTopLogprobs + j;
      EXPECT_EQ(top_ids.data_as<int32_t>()[at], cpu.top_ids.data_as<int32_t>()[at]) << "row " << r << " top " << j;
      EXPECT_NEAR(top_lps.data_as<float>()[at], cpu.top_logprobs.data_as<float>()[at], 1e-4) << "row " << r;
    }
    if (b.rows[r].num_top_logprobs < kMaxTopLogprobs) {
      EXPECT_EQ(top_ids.data_as<int32_t>()[r * kMaxTopLogprobs + b.rows[r].num_top_logprobs], -1) << "row " << r;
    }
  }
  EXPECT_GE(static_cast<double>(same), 0.995 * static_cast<double>(num_rows))
      << same << " of " << num_rows << " rows agree (vocab " << vocab << ")";
}

TEST_F(CudaSampling, MatchesTheCpuOnAQwenVocab) { run_case(*gpu_, 256, 200, 151936, 11); }
TEST_F(CudaSampling, MatchesTheCpuOnALlamaVocab) { run_case(*gpu_, 64, 64, 128256, 12); }
TEST_F(CudaSampling, MatchesTheCpuOnOneRow) { run_case(*gpu_, 1, 1, 151936, 13); }
TEST_F(CudaSampling, MatchesTheCpuOnASmallVocab) { run_case(*gpu_, 37, 20, 1000, 14); }

}  // namespace
}  // namespace strata
