// ModernBERT against what transformers and sentence-transformers computed (tests/fixtures/hf/
// modernbert_embedding, modernbert_reranker, modernbert_reranker_mean; scripts/fixtures/
// make_modernbert_fixture.py), on the CPU in f32: hidden states of every position of prompts longer
// than the local window, mean-pooled normalised embeddings within 1e-4, reranker scores (classifier
// pooling cls and mean) within 2e-3.
// Batched equals alone; sentence-transformers' max_seq_length bounds the inputs, and truncation
// cuts them to exactly the tokens the Hugging Face tokenizer keeps.
#include <gtest/gtest.h>

#include <cmath>

#include "model/pooling_fixture_support.h"
#include "strata/core/error.h"
#include "strata/engine/prompt_truncation.h"

namespace strata::test {
namespace {

constexpr float kEmbeddingTolerance = 1e-4f;
constexpr float kScoreTolerance = 2e-3f;

std::vector<int32_t> json_ids(const nlohmann::json& ids) { return ids.get<std::vector<int32_t>>(); }

TEST(ModernbertFixture, SentenceTransformersFolderAndHubConfig) {
  PoolingFixture f("modernbert_embedding");
  const std::optional<PoolerConfig>& pooler = f.loaded.config.pooler;
  ASSERT_TRUE(pooler.has_value());
  EXPECT_EQ(pooler->head, ModelHead::kHiddenStates);
  EXPECT_EQ(pooler->pooling_type, PoolingType::kMean);
  EXPECT_TRUE(pooler->normalize);
  EXPECT_EQ(pooler->max_seq_length, 48) << "sentence_bert_config.json";
  EXPECT_FALSE(f.loaded.model->causal());
  EXPECT_EQ(f.loaded.model->num_token_types(), 0);
  // global_attn_every_n_layers 3 (the Hub's layout; transformers 5 writes layer_types).
  const std::vector<std::string>& plan = f.loaded.model->layer_plan();
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_NE(plan[0].find("global"), std::string::npos);
  EXPECT_NE(plan[1].find("local"), std::string::npos);
  EXPECT_NE(plan[2].find("local"), std::string::npos);
  EXPECT_NE(plan[3].find("global"), std::string::npos);
}

TEST(ModernbertFixture, ByteLevelTokenizerMatchesHuggingFace) {
  PoolingFixture f("modernbert_embedding");
  for (const nlohmann::json& c : f.facts["tokenizer_cases"])
    EXPECT_EQ(f.tokenizer->encode(c["text"].get<std::string>(), true), json_ids(c["ids"])) << c["text"];
}

TEST(ModernbertFixture, HiddenStatesOfEveryPositionPastTheLocalWindow) {
  PoolingFixture f("modernbert_embedding");
  ModelRunner runner = f.runner();
  for (size_t i = 0; i < f.facts["prompts"].size(); ++i) {
    const std::string n = std::to_string(i);
    EXPECT_LT(max_abs_diff(every_position_outputs(runner, token_tensor(f.reference, "tokens_" + n)),
                           f32_tensor(f.reference, "hidden_" + n)),
              kEmbeddingTolerance) << "prompt " << i;
  }
  // 120 tokens: seven local windows of 16, both global layers over all of them.
  EXPECT_LT(max_abs_diff(every_position_outputs(runner, token_tensor(f.reference, "long_tokens")),
                         f32_tensor(f.reference, "long_hidden")),
            kEmbeddingTolerance);
}

TEST(ModernbertFixture, EmbeddingsAloneAndBatched) {
  PoolingFixture f("modernbert_embedding");
  ModelRunner runner = f.runner();
  CheckedEngine engine(runner, *f.tokenizer, {}, {.max_num_batched_tokens = 256, .enable_prefix_caching = true});
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::vector<float>> alone;
  for (size_t i = 0; i < f.facts["prompts"].size(); ++i) {
    prompts.push_back(token_tensor(f.reference, "tokens_" + std::to_string(i)));
    alone.push_back(pool_one(engine, prompts.back()));
    EXPECT_LT(max_abs_diff(alone[i], f32_tensor(f.reference, "embedding_" + std::to_string(i))), kEmbeddingTolerance)
        << "prompt " << i;
  }
  const std::vector<std::vector<float>> batched = pool_all(engine, prompts);
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_LT(max_abs_diff(batched[i], alone[i]), 1e-6f) << "prompt " << i;
  EXPECT_EQ(engine.stats().prefix_cache_hits_total, 0);
}

// max_seq_length (48) is the limit, not the 128 positions: the long text (141 tokens) is refused
// with a message naming the limit and truncate_prompt_tokens; cut to the limit it is exactly the
// 48 tokens sentence-transformers kept, and embeds as encode() embedded it.
TEST(ModernbertFixture, MaxSeqLengthBoundsInputsAndTruncationCutsToIt) {
  PoolingFixture f("modernbert_embedding");
  ModelRunner runner = f.runner();
  CheckedEngine engine(runner, *f.tokenizer, {}, {.max_num_batched_tokens = 256});
  ASSERT_EQ(engine.max_model_len(), 48);
  const std::string text = f.facts["long_text"].get<std::string>();
  const std::vector<int32_t> whole = f.tokenizer->encode(text, true);
  ASSERT_EQ(static_cast<int64_t>(whole.size()), f.facts["long_num_tokens"].get<int64_t>());
  try {
    engine.submit({.prompt_ids = whole, .pooling = PoolingRequest{}});
    ADD_FAILURE() << "141 tokens past a limit of 48";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("limit of 48 tokens"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("truncate_prompt_tokens"), std::string::npos) << e.what();
  }
  const int64_t max_tokens = truncation_max_tokens(-1, engine.max_model_len());
  EXPECT_EQ(max_tokens, 48);
  const std::vector<int32_t> cut = f.tokenizer->encode(text, true, max_tokens);
  EXPECT_EQ(cut, token_tensor(f.reference, "truncated_tokens"));
  EXPECT_LT(max_abs_diff(pool_one(engine, cut), f32_tensor(f.reference, "truncated_embedding")), kEmbeddingTolerance);
  // k tokens: k - 2 of the text between [CLS] and [SEP].
  const std::vector<int32_t> ten = f.tokenizer->encode(text, true, 10);
  ASSERT_EQ(ten.size(), 10u);
  EXPECT_EQ(std::vector<int32_t>(ten.begin(), ten.end() - 1), std::vector<int32_t>(whole.begin(), whole.begin() + 9));
  EXPECT_EQ(ten.back(), whole.back());
  EXPECT_THROW(truncation_max_tokens(49, engine.max_model_len()), Error);
}

// The reranker fixtures' (query, document) pairs through `name`: each score alone and batched.
void expect_reranker_scores(const std::string& name) {
  PoolingFixture f(name);
  ASSERT_TRUE(f.loaded.config.pooler.has_value());
  EXPECT_EQ(f.loaded.config.pooler->head, ModelHead::kClassifier);
  ModelRunner runner = f.runner();
  CheckedEngine engine(runner, *f.tokenizer, {}, {});
  std::vector<GenerationRequest> requests;
  for (size_t i = 0; i < f.facts["pairs"].size(); ++i) {
    const nlohmann::json& pair = f.facts["pairs"][i];
    const std::vector<int32_t> ids =
        f.tokenizer->encode_pair(pair["query"].get<std::string>(), pair["document"].get<std::string>(), true);
    EXPECT_EQ(ids, token_tensor(f.reference, "pair_tokens_" + std::to_string(i))) << "pair " << i;
    requests.push_back({.prompt_ids = ids, .max_tokens = 0, .pooling = PoolingRequest{}});
  }
  expect_scores_alone_and_batched(engine, f, requests, kScoreTolerance);
  // A pair past the 128 positions, cut longest first as CrossEncoder cuts it.
  const nlohmann::json& long_pair = f.facts["long_pair"];
  const std::vector<int32_t> cut = f.tokenizer->encode_pair(long_pair[0].get<std::string>(),
                                                            long_pair[1].get<std::string>(), true, nullptr,
                                                            truncation_max_tokens(-1, engine.max_model_len()));
  EXPECT_EQ(cut, token_tensor(f.reference, "truncated_pair_tokens"));
  const std::vector<float> score = pool_requests(engine, {{.prompt_ids = cut, .max_tokens = 0,
                                                           .pooling = PoolingRequest{}}}).front();
  ASSERT_EQ(score.size(), 1u);
  EXPECT_LT(std::abs(score[0] - f32_tensor(f.reference, "truncated_score")[0]), kScoreTolerance);
}

TEST(ModernbertFixture, RerankerWithClsPooling) {
  expect_reranker_scores("modernbert_reranker");
  PoolingFixture f("modernbert_reranker");
  EXPECT_EQ(f.loaded.config.pooler->pooling_type, PoolingType::kCls);
}

// classifier_pooling "mean": the head reads the mean hidden state, not the mean of per-row scores.
TEST(ModernbertFixture, RerankerWithMeanPooling) { expect_reranker_scores("modernbert_reranker_mean"); }

// bf16 weights and activations: embeddings within 3e-2 of sentence-transformers' f32 ones (cosine
// above 0.999) and both rerankers' scores within 1e-2; the local windows run through the CUDA attention.
TEST(CudaModernbertFixture, EmbeddingsAndScoresOnTheGpu) {
  if (!make_cuda_backend(0)) GTEST_SKIP() << "no CUDA GPU visible: CUDA ModernBERT tests skipped";
  {
    PoolingFixture f("modernbert_embedding", {}, make_cuda_backend(0));
    ModelRunner runner = f.runner();
    CheckedEngine engine(runner, *f.tokenizer, {}, {});
    std::vector<std::vector<int32_t>> prompts;
    for (size_t i = 0; i < f.facts["prompts"].size(); ++i)
      prompts.push_back(token_tensor(f.reference, "tokens_" + std::to_string(i)));
    prompts.push_back(token_tensor(f.reference, "truncated_tokens"));
    const std::vector<std::vector<float>> got = pool_all(engine, prompts);
    for (size_t i = 0; i < prompts.size(); ++i) {
      const std::vector<float> want = f32_tensor(
          f.reference, i + 1 < prompts.size() ? "embedding_" + std::to_string(i) : std::string("truncated_embedding"));
      double dot = 0;
      for (size_t j = 0; j < want.size() && j < got[i].size(); ++j) dot += double{got[i][j]} * want[j];
      EXPECT_LT(max_abs_diff(got[i], want), 3e-2f) << "prompt " << i;
      EXPECT_GT(dot, 0.999) << "prompt " << i;
    }
  }
  for (const char* name : {"modernbert_reranker", "modernbert_reranker_mean"}) {
    PoolingFixture f(name, {}, make_cuda_backend(0));
    ModelRunner runner = f.runner();
    CheckedEngine engine(runner, *f.tokenizer, {}, {});
    std::vector<GenerationRequest> requests;
    for (size_t i = 0; i < f.facts["pairs"].size(); ++i)
      requests.push_back({.prompt_ids = token_tensor(f.reference, "pair_tokens_" + std::to_string(i)),
                          .max_tokens = 0, .pooling = PoolingRequest{}});
    const std::vector<std::vector<float>> scores = pool_requests(engine, requests);
    for (size_t i = 0; i < requests.size(); ++i) {
      ASSERT_EQ(scores[i].size(), 1u);
      EXPECT_LT(std::abs(scores[i][0] - f32_tensor(f.reference, "score_" + std::to_string(i))[0]), 1e-2f)
          << name << " pair " << i;
    }
  }
}

}  // namespace
}  // namespace strata::test
