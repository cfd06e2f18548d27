// Pooling models against what transformers and sentence-transformers computed
// (tests/fixtures/hf/qwen3_embedding and qwen3_reranker, scripts/fixtures/make_pooling_fixture.py):
// the hidden states of every position, and the engine's embeddings and cross-encoder scores, on the
// CPU within 1e-4 (f32 arithmetic on both sides; the embedding components are ~0.1, the scores
// ~0.6). The engine's answers are the same whole or chunked (a 16-token step budget), alone or
// batched, with or without a prefix-cache hit; no KV block is left behind (CheckedEngine). On a
// GPU (CudaPoolingFixture, skipped without one) the same within bf16 tolerances.
#include <gtest/gtest.h>

#include <cmath>

#include "model/pooling_fixture_support.h"
#include "strata/core/error.h"

namespace strata::test {
namespace {

constexpr float kTolerance = 1e-4f;

TEST(PoolingFixture, EmbeddingCheckpointIsFoundPooling) {
  PoolingFixture f("qwen3_embedding");
  const std::optional<PoolerConfig>& pooler = f.loaded.config.pooler;
  ASSERT_TRUE(pooler.has_value()) << "modules.json and architectures [Qwen3Model] make it a pooling model";
  EXPECT_EQ(pooler->head, ModelHead::kHiddenStates);
  EXPECT_EQ(pooler->pooling_type, PoolingType::kLast);  // 1_Pooling/config.json
  EXPECT_TRUE(pooler->normalize);                         // the Normalize module
  EXPECT_TRUE(pooler->matryoshka);
  EXPECT_EQ(f.loaded.model->output_width(), 64);
}

TEST(PoolingFixture, TokenizerMatchesTheReference) {
  PoolingFixture f("qwen3_embedding");
  for (size_t i = 0; i < f.facts["prompts"].size(); ++i)
    EXPECT_EQ(f.tokenizer->encode(f.facts["prompts"][i]["text"].get<std::string>(), true),
              token_tensor(f.reference, "tokens_" + std::to_string(i))) << "prompt " << i;
  // Qwen3-Embedding's pair template: <|endoftext|> after each text.
  std::vector<int32_t> expected = f.tokenizer->encode("a", false);
  expected.push_back(480);
  for (int32_t id : f.tokenizer->encode("b", false)) expected.push_back(id);
  expected.push_back(480);
  EXPECT_EQ(f.tokenizer->encode_pair("a", "b", true), expected);
}

TEST(PoolingFixture, HiddenStatesOfEveryPosition) {
  PoolingFixture f("qwen3_embedding");
  ModelRunner runner = f.runner();
  for (size_t i = 0; i < f.facts["prompts"].size(); ++i) {
    const std::vector<int32_t> ids = token_tensor(f.reference, "tokens_" + std::to_string(i));
    EXPECT_LT(max_abs_diff(every_position_outputs(runner, ids), f32_tensor(f.reference, "hidden_" + std::to_string(i))),
              kTolerance) << "prompt " << i;
  }
}

TEST(PoolingFixture, EmbeddingsChunkedBatchedAndCached) {
  PoolingFixture f("qwen3_embedding");
  ModelRunner runner = f.runner();
  std::vector<std::vector<int32_t>> prompts;
  for (size_t i = 0; i < f.facts["prompts"].size(); ++i)
    prompts.push_back(token_tensor(f.reference, "tokens_" + std::to_string(i)));
  const auto expected = [&](size_t i) { return f32_tensor(f.reference, "embedding_" + std::to_string(i)); };
  std::vector<std::vector<float>> alone;
  {
    CheckedEngine whole(runner, *f.tokenizer, {}, {.max_num_batched_tokens = 512, .enable_prefix_caching = false});
    for (size_t i = 0; i < prompts.size(); ++i) {
      alone.push_back(pool_one(whole, prompts[i]));
      EXPECT_LT(max_abs_diff(alone[i], expected(i)), kTolerance) << "prompt " << i;
    }
  }
  CheckedEngine chunked(runner, *f.tokenizer, {}, {.max_num_batched_tokens = 16, .enable_prefix_caching = true});
  const std::vector<std::vector<float>> batched = pool_all(chunked, prompts);
  const std::vector<std::vector<float>> cached = pool_all(chunked, prompts);  // the same prompts, now cached
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_LT(max_abs_diff(batched[i], alone[i]), 1e-5f) << "chunked and batched, prompt " << i;
    EXPECT_LT(max_abs_diff(cached[i], alone[i]), 1e-5f) << "after a prefix-cache hit, prompt " << i;
  }
  EXPECT_GT(chunked.stats().prefix_cache_hits_total, 0);
}

TEST(PoolingFixture, MeanAndClsPoolingFromTheHiddenStates) {
  for (const char* type : {"MEAN", "CLS"}) {
    PoolingFixture f("qwen3_embedding", {.pooler_config = std::string("{\"pooling_type\": \"") + type + "\"}"});
    ModelRunner runner = f.runner();
    CheckedEngine engine(runner, *f.tokenizer, {}, {.max_num_batched_tokens = 16, .enable_prefix_caching = true});
    for (size_t i = 0; i < f.facts["prompts"].size(); ++i) {
      const std::vector<int32_t> ids = token_tensor(f.reference, "tokens_" + std::to_string(i));
      const std::vector<float> hidden = f32_tensor(f.reference, "hidden_" + std::to_string(i));
      std::vector<float> want(64, 0.0f);
      for (size_t p = 0; p < ids.size(); ++p)
        for (size_t j = 0; j < 64; ++j)
          want[j] += std::string(type) == "CLS" ? (p == 0 ? hidden[j] : 0.0f) : hidden[p * 64 + j] / ids.size();
      const std::vector<float> first = pool_one(engine, ids), again = pool_one(engine, ids);
      EXPECT_LT(max_abs_diff(first, normalized(want)), kTolerance) << type << " prompt " << i;
      EXPECT_EQ(first, again) << type << ": the second run must not start from the prefix cache";
    }
  }
}

TEST(PoolingFixture, MatryoshkaDimensions) {
  PoolingFixture f("qwen3_embedding");
  ModelRunner runner = f.runner();
  CheckedEngine engine(runner, *f.tokenizer, {}, {});
  const std::vector<int32_t> ids = token_tensor(f.reference, "tokens_1");
  std::vector<float> full = f32_tensor(f.reference, "embedding_1");
  const std::vector<float> cut = pool_one(engine, ids, 16);
  EXPECT_LT(max_abs_diff(cut, normalized({full.begin(), full.begin() + 16})), kTolerance);
  EXPECT_THROW(engine.submit({.prompt_ids = ids, .pooling = PoolingRequest{65}}), Error);
  EXPECT_THROW(engine.submit({.prompt_ids = ids, .pooling = PoolingRequest{-1}}), Error);
}

TEST(PoolingFixture, CrossEncoderScores) {
  PoolingFixture f("qwen3_reranker");
  ASSERT_TRUE(f.loaded.config.pooler.has_value());
  EXPECT_EQ(f.loaded.config.pooler->head, ModelHead::kClassifier);
  EXPECT_EQ(f.loaded.config.pooler->num_labels, 1);
  ModelRunner runner = f.runner();
  CheckedEngine engine(runner, *f.tokenizer, {}, {.max_num_batched_tokens = 16});
  std::vector<std::vector<int32_t>> pairs;
  for (size_t i = 0; i < f.facts["pairs"].size(); ++i) {
    const nlohmann::json& pair = f.facts["pairs"][i];
    pairs.push_back(token_tensor(f.reference, "pair_tokens_" + std::to_string(i)));
    EXPECT_EQ(f.tokenizer->encode_pair(pair["query"].get<std::string>(), pair["document"].get<std::string>(), true),
              pairs.back()) << "pair " << i;
  }
  const std::vector<std::vector<float>> scores = pool_all(engine, pairs);
  for (size_t i = 0; i < pairs.size(); ++i) {
    ASSERT_EQ(scores[i].size(), 1u);
    EXPECT_LT(std::abs(scores[i][0] - f32_tensor(f.reference, "score_" + std::to_string(i))[0]), kTolerance)
        << "pair " << i;
  }
  EXPECT_THROW(engine.submit({.prompt_ids = pairs[0], .pooling = PoolingRequest{8}}), Error)
      << "a classifier has no matryoshka dimensions";
}

TEST(PoolingFixture, RunnersRefuseTheOtherKindOfRequest) {
  PoolingFixture f("qwen3_embedding");
  ModelRunner runner = f.runner();
  CheckedEngine engine(runner, *f.tokenizer, {}, {.max_model_len = 64});
  const std::vector<int32_t> ids = token_tensor(f.reference, "tokens_0");
  EXPECT_THROW(engine.submit({.prompt_ids = ids, .max_tokens = 4}), Error) << "generation on a pooling model";
  EXPECT_THROW(engine.submit({.prompt_ids = std::vector<int32_t>(65, 7), .pooling = PoolingRequest{}}), Error);
  EXPECT_EQ(pool_one(engine, std::vector<int32_t>(64, 7)).size(), 64u) << "a whole context is allowed";
  EngineFixture generative;
  ModelRunner generative_runner(*generative.loaded.model, *generative.backend, {.num_kv_blocks = 64});
  CheckedEngine generator(generative_runner, *generative.tokenizer, {}, {});
  EXPECT_FALSE(generative.loaded.config.pooler.has_value());
  EXPECT_THROW(generator.submit({.prompt_ids = ids, .pooling = PoolingRequest{}}), Error);
}

// bf16 weights and activations: an embedding within 3e-2 of transformers' f32 one (components
// ~0.1; cosine above 0.999), a score within 1e-2.
TEST(CudaPoolingFixture, EmbeddingsAndScoresOnTheGpu) {
  if (!make_cuda_backend(0)) GTEST_SKIP() << "no CUDA GPU visible: CUDA pooling tests skipped";
  {
    PoolingFixture f("qwen3_embedding", {}, make_cuda_backend(0));
    ModelRunner runner = f.runner();
    CheckedEngine engine(runner, *f.tokenizer, {}, {.max_num_batched_tokens = 16});
    for (size_t i = 0; i < f.facts["prompts"].size(); ++i) {
      const std::vector<float> got = pool_one(engine, token_tensor(f.reference, "tokens_" + std::to_string(i)));
      const std::vector<float> want = f32_tensor(f.reference, "embedding_" + std::to_string(i));
      double dot = 0;
      for (size_t j = 0; j < want.size() && j < got.size(); ++j) dot += double{got[j]} * want[j];
      EXPECT_LT(max_abs_diff(got, want), 3e-2f) << "prompt " << i;
      EXPECT_GT(dot, 0.999) << "prompt " << i;
    }
  }
  PoolingFixture r("qwen3_reranker", {}, make_cuda_backend(0));
  ModelRunner reranker_runner = r.runner();
  CheckedEngine reranker(reranker_runner, *r.tokenizer, {}, {});
  for (size_t i = 0; i < r.facts["pairs"].size(); ++i) {
    const std::vector<float> score = pool_one(reranker, token_tensor(r.reference, "pair_tokens_" + std::to_string(i)));
    ASSERT_EQ(score.size(), 1u);
    EXPECT_LT(std::abs(score[0] - f32_tensor(r.reference, "score_" + std::to_string(i))[0]), 1e-2f) << "pair " << i;
  }
}

}  // namespace
}  // namespace strata::test
