// What the pooling fixture tests share (tests/fixtures/hf/qwen3_embedding, qwen3_reranker,
// bert_embedding, bert_cross_encoder): the loaded model, its tokenizer and reference tensors, and
// pooled answers from an engine.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine_test_support.h"
#include "strata/text/tokenizer.h"
#include "strata/weights/safetensors.h"
#include "test_support.h"

namespace strata::test {

std::vector<float> f32_tensor(const SafetensorsFile& file, const std::string& name);
std::vector<int32_t> token_tensor(const SafetensorsFile& file, const std::string& name);  // int64 in the file
float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b);
std::vector<float> normalized(std::vector<float> v);

struct PoolingFixture {
  explicit PoolingFixture(const std::string& name, PoolingFlags flags = {}, std::unique_ptr<Backend> on = nullptr);
  ModelRunner runner(int64_t num_kv_blocks = 64) const {
    return ModelRunner(*loaded.model, *backend, {.num_kv_blocks = num_kv_blocks});
  }

  std::unique_ptr<Backend> backend;
  std::string dir;
  LoadedModel loaded;
  SafetensorsFile reference;
  std::unique_ptr<text::Tokenizer> tokenizer;
  nlohmann::json facts;  // reference.json
};

// The output rows of every position of `ids`, run alone through a DirectSession: [len * width] f32.
std::vector<float> every_position_outputs(ModelRunner& runner, const std::vector<int32_t>& ids);

// Every request's pooled vector, submitted together (one step may hold several).
std::vector<std::vector<float>> pool_requests(CheckedEngine& engine, std::vector<GenerationRequest> requests);
std::vector<std::vector<float>> pool_all(CheckedEngine& engine, const std::vector<std::vector<int32_t>>& prompts,
                                         int32_t dimensions = 0);
std::vector<float> pool_one(CheckedEngine& engine, const std::vector<int32_t>& ids, int32_t dimensions = 0);

// Each request's one score alone within `tolerance` of the fixture's score_<i>, and batched equal
// to alone (cross-encoder and reranker fixtures).
void expect_scores_alone_and_batched(CheckedEngine& engine, const PoolingFixture& f,
                                     const std::vector<GenerationRequest>& requests, float tolerance);

}  // namespace strata::test
