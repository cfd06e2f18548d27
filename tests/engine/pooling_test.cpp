// pool_rows / finish_pooling on small hand inputs: LAST, MEAN over chunks, CLS, matryoshka
// truncation before normalisation, and the classifier's sigmoid and softmax. 3-4-5 and
// 5-12-13 triangles keep every expected value exact.
#include <gtest/gtest.h>

#include <cmath>

#include "strata/engine/pooling.h"

namespace strata {
namespace {

PoolerConfig embed(PoolingType type, bool normalize = true) {
  return {.head = ModelHead::kHiddenStates, .pooling_type = type, .normalize = normalize};
}

std::vector<float> pool(const PoolerConfig& pooler, const std::vector<std::vector<float>>& chunks,
                        const std::vector<int32_t>& first_positions, int64_t width, int32_t dimensions = 0) {
  PoolingState state;
  for (size_t i = 0; i < chunks.size(); ++i) pool_rows(pooler, chunks[i], width, first_positions[i], state);
  return finish_pooling(pooler, state, dimensions);
}

TEST(Pooling, LastKeepsTheNewestRowAndNormalises) {
  EXPECT_EQ(pool(embed(PoolingType::kLast, false), {{1, 2, 3, 4}}, {0}, 2), (std::vector<float>{3, 4}));
  const std::vector<float> v = pool(embed(PoolingType::kLast), {{9, 9}, {3, 4}}, {0, 5}, 2);
  EXPECT_FLOAT_EQ(v[0], 0.6f);
  EXPECT_FLOAT_EQ(v[1], 0.8f);
}

TEST(Pooling, MeanSumsEveryChunk) {
  // Rows (1, 2), (3, 4) in one chunk and (5, 6) in the next: mean (3, 4).
  EXPECT_EQ(pool(embed(PoolingType::kMean, false), {{1, 2, 3, 4}, {5, 6}}, {0, 2}, 2), (std::vector<float>{3, 4}));
  const std::vector<float> v = pool(embed(PoolingType::kMean), {{1, 2, 3, 4}, {5, 6}}, {0, 2}, 2);
  EXPECT_FLOAT_EQ(v[0], 0.6f);
  EXPECT_FLOAT_EQ(v[1], 0.8f);
}

TEST(Pooling, MeanStartsOverWhenAPromptIsRecomputed) {
  // The engine resets the state when a row starts at position 0 again; pool_rows itself sums.
  PoolingState state;
  const PoolerConfig pooler = embed(PoolingType::kMean, false);
  pool_rows(pooler, std::vector<float>{1, 1}, 2, 0, state);
  state = {};
  pool_rows(pooler, std::vector<float>{3, 4}, 2, 0, state);
  EXPECT_EQ(finish_pooling(pooler, state, 0), (std::vector<float>{3, 4}));
}

TEST(Pooling, ClsKeepsPositionZero) {
  const std::vector<float> v = pool(embed(PoolingType::kCls), {{3, 4, 7, 7}, {8, 8}}, {0, 2}, 2);
  EXPECT_FLOAT_EQ(v[0], 0.6f);
  EXPECT_FLOAT_EQ(v[1], 0.8f);
}

TEST(Pooling, DimensionsTruncateBeforeNormalising) {
  const PoolerConfig pooler = embed(PoolingType::kLast);
  const std::vector<float> whole = pool(pooler, {{3, 4, 12}}, {0}, 3);
  EXPECT_FLOAT_EQ(whole[0], 3.0f / 13);
  EXPECT_FLOAT_EQ(whole[2], 12.0f / 13);
  const std::vector<float> cut = pool(pooler, {{3, 4, 12}}, {0}, 3, /*dimensions=*/2);
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_FLOAT_EQ(cut[0], 0.6f);
  EXPECT_FLOAT_EQ(cut[1], 0.8f);
  EXPECT_EQ(pool(embed(PoolingType::kLast, false), {{3, 4, 12}}, {0}, 3, 1), (std::vector<float>{3}));
}

TEST(Pooling, ZeroVectorStaysZero) {
  EXPECT_EQ(pool(embed(PoolingType::kLast), {{0, 0}}, {0}, 2), (std::vector<float>{0, 0}));
}

TEST(Pooling, ClassifierActivations) {
  PoolerConfig one{.head = ModelHead::kClassifier, .normalize = false, .num_labels = 1};
  EXPECT_FLOAT_EQ(pool(one, {{0}}, {0}, 1)[0], 0.5f);
  EXPECT_FLOAT_EQ(pool(one, {{std::log(3.0f)}}, {0}, 1)[0], 0.75f);
  PoolerConfig two{.head = ModelHead::kClassifier, .normalize = false, .num_labels = 2};
  const std::vector<float> probs = pool(two, {{5, 5 + std::log(3.0f)}}, {0}, 2);
  EXPECT_FLOAT_EQ(probs[0], 0.25f);
  EXPECT_FLOAT_EQ(probs[1], 0.75f);
  two.activation = false;
  EXPECT_EQ(pool(two, {{-2, 7}}, {0}, 2), (std::vector<float>{-2, 7}));
}

TEST(Pooling, WhichPoolersReadEveryPosition) {
  EXPECT_FALSE(pools_every_position(embed(PoolingType::kLast)));
  EXPECT_TRUE(pools_every_position(embed(PoolingType::kMean)));
  EXPECT_TRUE(pools_every_position(embed(PoolingType::kCls)));
}

}  // namespace
}  // namespace strata
