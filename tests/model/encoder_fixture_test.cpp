// BERT against what transformers and sentence-transformers computed (tests/fixtures/hf/bert_embedding
// and bert_cross_encoder, scripts/fixtures/make_encoder_fixture.py), on the CPU in f32: the hidden
// states of every position and the embeddings (mean pooling, a Dense module, Normalize) within
// 1e-4, cross-encoder scores over pair inputs with their token types within 2e-3. Batched equals
// alone; prompts run whole (no chunking, no prefix-cache hit), and one past the 128 positions is
// refused. On a GPU (CudaEncoderFixture, skipped without one) the same within bf16 tolerances.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "model/pooling_fixture_support.h"
#include "strata/core/error.h"
#include "strata/weights/safetensors_writer.h"

namespace strata::test {
namespace {

constexpr float kEmbeddingTolerance = 1e-4f;
constexpr float kScoreTolerance = 2e-3f;

std::vector<std::vector<int32_t>> reference_prompts(const PoolingFixture& f) {
  std::vector<std::vector<int32_t>> prompts;
  for (size_t i = 0; i < f.facts["prompts"].size(); ++i)
    prompts.push_back(token_tensor(f.reference, "tokens_" + std::to_string(i)));
  return prompts;
}

TEST(EncoderFixture, SentenceTransformersFolderIsFoundPooling) {
  PoolingFixture f("bert_embedding");
  const std::optional<PoolerConfig>& pooler = f.loaded.config.pooler;
  ASSERT_TRUE(pooler.has_value());
  EXPECT_EQ(pooler->head, ModelHead::kHiddenStates);
  EXPECT_EQ(pooler->pooling_type, PoolingType::kMean);  // 1_Pooling/config.json's pooling_mode
  EXPECT_TRUE(pooler->normalize);
  ASSERT_EQ(pooler->dense.size(), 1u);  // 2_Dense
  EXPECT_EQ(pooler->dense[0]->in_features, 64);
  EXPECT_EQ(pooler->dense[0]->out_features, 32);
  EXPECT_EQ(pooler->dense[0]->activation, DenseActivation::kTanh);
  EXPECT_EQ(pooler->embedding_size(64), 32);
  EXPECT_FALSE(f.loaded.model->causal());
  EXPECT_EQ(f.loaded.model->num_token_types(), 2);
}

TEST(EncoderFixture, HiddenStatesOfEveryPosition) {
  PoolingFixture f("bert_embedding");
  ModelRunner runner = f.runner();
  const std::vector<std::vector<int32_t>> prompts = reference_prompts(f);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_LT(max_abs_diff(every_position_outputs(runner, prompts[i]),
                           f32_tensor(f.reference, "hidden_" + std::to_string(i))),
              kEmbeddingTolerance) << "prompt " << i;
  }
}

TEST(EncoderFixture, EmbeddingsAloneAndBatchedWithoutPrefixCache) {
  PoolingFixture f("bert_embedding");
  ModelRunner runner = f.runner();
  const std::vector<std::vector<int32_t>> prompts = reference_prompts(f);
  CheckedEngine engine(runner, *f.tokenizer, {}, {.max_num_batched_tokens = 256, .enable_prefix_caching = true});
  std::vector<std::vector<float>> alone;
  for (size_t i = 0; i < prompts.size(); ++i) {
    alone.push_back(pool_one(engine, prompts[i]));
    EXPECT_LT(max_abs_diff(alone[i], f32_tensor(f.reference, "embedding_" + std::to_string(i))), kEmbeddingTolerance)
        << "prompt " << i;
  }
  const std::vector<std::vector<float>> batched = pool_all(engine, prompts);  // the same prompts again, at once
  for (size_t i = 0; i < prompts.size(); ++i)
    EXPECT_LT(max_abs_diff(batched[i], alone[i]), 1e-6f) << "batched, prompt " << i;
  EXPECT_EQ(engine.stats().prefix_cache_hits_total, 0) << "a bidirectional model never starts from cached blocks";
}

TEST(EncoderFixture, PromptsRunWholeWithinThePositions) {
  PoolingFixture f("bert_embedding");
  ModelRunner runner = f.runner();
  const std::vector<int32_t> ids = token_tensor(f.reference, "tokens_3");  // the longest, past 16 tokens
  {
    // A 16-token budget would chunk a decoder's prompt; an encoder's is refused instead.
    CheckedEngine small_steps(runner, *f.tokenizer, {}, {.max_num_batched_tokens = 16});
    EXPECT_THROW(small_steps.submit({.prompt_ids = ids, .pooling = PoolingRequest{}}), Error);
  }
  CheckedEngine engine(runner, *f.tokenizer, {}, {.max_num_batched_tokens = 512, .max_model_len = 512});
  EXPECT_EQ(engine.max_model_len(), 128) << "max_position_embeddings bounds the context";
  std::vector<int32_t> too_long(129);
  for (size_t i = 0; i < too_long.size(); ++i) too_long[i] = ids[i % ids.size()];
  try {
    engine.submit({.prompt_ids = too_long, .pooling = PoolingRequest{}});
    ADD_FAILURE() << "129 tokens on a model of 128 positions";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("128"), std::string::npos) << e.what();
  }
  EXPECT_EQ(pool_one(engine, std::vector<int32_t>(too_long.begin(), too_long.begin() + 128)).size(), 32u);
}

TEST(EncoderFixture, CrossEncoderScoresPairsWithTokenTypes) {
  PoolingFixture f("bert_cross_encoder");
  ASSERT_TRUE(f.loaded.config.pooler.has_value());
  EXPECT_EQ(f.loaded.config.pooler->head, ModelHead::kClassifier);
  EXPECT_EQ(f.loaded.config.pooler->pooling_type, PoolingType::kCls) << "BERT pools [CLS] unless told otherwise";
  ModelRunner runner = f.runner();
  CheckedEngine engine(runner, *f.tokenizer, {}, {});
  std::vector<GenerationRequest> requests;
  for (size_t i = 0; i < f.facts["pairs"].size(); ++i) {
    const nlohmann::json& pair = f.facts["pairs"][i];
    auto types = std::make_shared<std::vector<int32_t>>();
    const std::vector<int32_t> ids =
        f.tokenizer->encode_pair(pair["query"].get<std::string>(), pair["document"].get<std::string>(), true, types.get());
    EXPECT_EQ(ids, token_tensor(f.reference, "pair_tokens_" + std::to_string(i))) << "pair " << i;
    EXPECT_EQ(*types, token_tensor(f.reference, "pair_type_ids_" + std::to_string(i))) << "pair " << i;
    requests.push_back({.prompt_ids = ids, .max_tokens = 0, .pooling = PoolingRequest{}, .token_type_ids = types});
  }
  expect_scores_alone_and_batched(engine, f, requests, kScoreTolerance);
  GenerationRequest bad = requests[0];
  bad.token_type_ids = std::make_shared<std::vector<int32_t>>(bad.prompt_ids.size(), 2);
  EXPECT_THROW(engine.submit(bad), Error) << "token type 2 of a model with 2 types";
}

// The cross-encoder with its LayerNorms named as the original BERT checkpoints name them.
std::string legacy_layer_norm_copy(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path src = fixture_path("hf/" + name), dst = fs::path(temp_dir()) / per_test_name("legacy_" + name);
  fs::create_directories(dst);
  for (const fs::directory_entry& entry : fs::directory_iterator(src))
    if (entry.is_regular_file() && entry.path().filename() != "model.safetensors")
      fs::copy_file(entry.path(), dst / entry.path().filename(), fs::copy_options::overwrite_existing);
  const SafetensorsFile weights((src / "model.safetensors").string());
  std::vector<std::pair<std::string, Tensor>> renamed;
  for (const WeightInfo& info : weights.tensors()) {
    std::string key = info.name;
    if (key.ends_with("LayerNorm.weight")) key.replace(key.size() - 6, 6, "gamma");
    if (key.ends_with("LayerNorm.bias")) key.replace(key.size() - 4, 4, "beta");
    renamed.emplace_back(key, Tensor::view(const_cast<void*>(info.data), info.dtype, info.shape));
  }
  write_safetensors((dst / "model.safetensors").string(), renamed);
  return dst.string();
}

TEST(EncoderFixture, OriginalBertLayerNormNames) {
  PoolingFixture f("bert_cross_encoder");
  const std::unique_ptr<Backend> backend = make_cpu_backend(2);
  const LoadedModel legacy = load_model({.model_path = legacy_layer_norm_copy("bert_cross_encoder")}, *backend);
  ModelRunner runner(*legacy.model, *backend, {.num_kv_blocks = 64});
  CheckedEngine engine(runner, *f.tokenizer, {}, {});
  const GenerationRequest request{
      .prompt_ids = token_tensor(f.reference, "pair_tokens_0"), .max_tokens = 0, .pooling = PoolingRequest{},
      .token_type_ids = std::make_shared<std::vector<int32_t>>(token_tensor(f.reference, "pair_type_ids_0"))};
  const std::vector<float> score = pool_requests(engine, {request})[0];
  ASSERT_EQ(score.size(), 1u);
  EXPECT_LT(std::abs(score[0] - f32_tensor(f.reference, "score_0")[0]), kScoreTolerance);
}

// bf16 weights and activations (f32 position and type tables): embeddings within 3e-2 of
// sentence-transformers' f32 ones (cosine above 0.999), scores of pairs with token types within 1e-2.
TEST(CudaEncoderFixture, EmbeddingsAndScoresOnTheGpu) {
  if (!make_cuda_backend(0)) GTEST_SKIP() << "no CUDA GPU visible: CUDA encoder tests skipped";
  {
    PoolingFixture f("bert_embedding", {}, make_cuda_backend(0));
    ModelRunner runner = f.runner();
    CheckedEngine engine(runner, *f.tokenizer, {}, {});
    const std::vector<std::vector<int32_t>> prompts = reference_prompts(f);
    const std::vector<std::vector<float>> got = pool_all(engine, prompts);
    for (size_t i = 0; i < prompts.size(); ++i) {
      const std::vector<float> want = f32_tensor(f.reference, "embedding_" + std::to_string(i));
      double dot = 0;
      for (size_t j = 0; j < want.size() && j < got[i].size(); ++j) dot += double{got[i][j]} * want[j];
      EXPECT_LT(max_abs_diff(got[i], want), 3e-2f) << "prompt " << i;
      EXPECT_GT(dot, 0.999) << "prompt " << i;
    }
  }
  PoolingFixture f("bert_cross_encoder", {}, make_cuda_backend(0));
  ModelRunner runner = f.runner();
  CheckedEngine engine(runner, *f.tokenizer, {}, {});
  std::vector<GenerationRequest> requests;
  for (size_t i = 0; i < f.facts["pairs"].size(); ++i)
    requests.push_back({.prompt_ids = token_tensor(f.reference, "pair_tokens_" + std::to_string(i)), .max_tokens = 0,
                        .pooling = PoolingRequest{},
                        .token_type_ids = std::make_shared<std::vector<int32_t>>(
                            token_tensor(f.reference, "pair_type_ids_" + std::to_string(i)))});
  const std::vector<std::vector<float>> scores = pool_requests(engine, requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    ASSERT_EQ(scores[i].size(), 1u);
    EXPECT_LT(std::abs(scores[i][0] - f32_tensor(f.reference, "score_" + std::to_string(i))[0]), 1e-2f) << "pair " << i;
  }
}

}  // namespace
}  // namespace strata::test
