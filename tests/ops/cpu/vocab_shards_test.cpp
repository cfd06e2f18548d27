// The vocabulary-parallel ops on the CPU with exact values: a shard's lookup gives its own rows
// and zeros for other ranks' tokens; joining gathered shards puts each rank's columns at
// r * S and drops the padding columns past the vocabulary.
#include "strata/ops/vocab_shards.h"

#include <gtest/gtest.h>

#include "strata/ops/embedding.h"
#include "test_support.h"

namespace strata {
namespace {

TEST(VocabShardsOp, JoinPutsEachRanksColumnsInPlaceAndDropsThePadding) {
  // 3 ranks of 4 columns for a vocabulary of 10: rank 2's last 2 columns are padding.
  const int64_t ranks = 3, tokens = 5, cols = 4, vocab = 10;
  const Tensor shards = test::random_f32({ranks, tokens, cols}, 71, -5.f, 5.f);
  Tensor out = Tensor::host(DType::kF32, {tokens, vocab});
  ops::join_vocab_shards(shards, out);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t v = 0; v < vocab; ++v)
      ASSERT_EQ(out.data_as<float>()[t * vocab + v], shards.data_as<float>()[((v / cols) * tokens + t) * cols + v % cols])
          << "token " << t << " entry " << v;
  // Entry 9 of token 1 is rank 2's column 1.
  EXPECT_EQ(out.data_as<float>()[1 * vocab + 9], shards.data_as<float>()[(2 * tokens + 1) * cols + 1]);
}

// A vocabulary of 3 over 2 ranks of 4 columns: rank 1 holds padding only.
TEST(VocabShardsOp, JoinSkipsARankOfPaddingOnly) {
  const Tensor shards = test::random_f32({2, 2, 4}, 74);
  Tensor out = Tensor::host(DType::kF32, {2, 3});
  ops::join_vocab_shards(shards, out);
  const float* in = shards.data_as<float>();
  EXPECT_EQ(std::vector<float>(out.data_as<float>(), out.data_as<float>() + 6),
            (std::vector<float>{in[0], in[1], in[2], in[4], in[5], in[6]}));
}

TEST(VocabShardsOp, JoinRefusesAVocabularyTheShardsDoNotCover) {
  const Tensor shards = test::random_f32({2, 3, 4}, 72);
  Tensor too_wide = Tensor::host(DType::kF32, {3, 9});
  EXPECT_DEATH(ops::join_vocab_shards(shards, too_wide), "join_vocab_shards");
}

TEST(EmbeddingShardOp, OwnRowsWidenedOtherTokensZero) {
  // Rows 8..11 of the vocabulary; tokens 9 and 11 are this shard's, 3 and 12 another rank's.
  const Tensor table = test::random_bf16({4, 6}, 73);
  std::vector<int32_t> ids = {9, 3, 11, 12};
  Tensor out = Tensor::host(DType::kF32, {4, 6});
  ops::embedding_shard(table, Tensor::view(ids.data(), DType::kI32, {4}), 8, out);
  Tensor whole = Tensor::host(DType::kF32, {4, 6});
  std::vector<int32_t> rows = {0, 1, 2, 3};
  ops::embedding(table, Tensor::view(rows.data(), DType::kI32, {4}), whole);
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(out.data_as<float>()[0 * 6 + i], whole.data_as<float>()[1 * 6 + i]);
    EXPECT_EQ(out.data_as<float>()[1 * 6 + i], 0.0f);
    EXPECT_EQ(out.data_as<float>()[2 * 6 + i], whole.data_as<float>()[3 * 6 + i]);
    EXPECT_EQ(out.data_as<float>()[3 * 6 + i], 0.0f);
    EXPECT_NE(whole.data_as<float>()[1 * 6 + i], 0.0f);
  }
}

}  // namespace
}  // namespace strata
