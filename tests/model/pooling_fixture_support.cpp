#include "model/pooling_fixture_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "strata/engine/direct_session.h"

namespace strata::test {

namespace {

// The values of tensor `name`, stored as `Stored`, converted to `Out`.
template <typename Stored, typename Out>
std::vector<Out> read_tensor(const SafetensorsFile& file, const std::string& name) {
  const WeightInfo* info = file.find(name);
  if (info == nullptr) {
    ADD_FAILURE() << "no " << name;
    return {};
  }
  const Stored* data = static_cast<const Stored*>(info->data);
  return {data, data + info->shape.numel()};
}

}  // namespace

std::vector<float> f32_tensor(const SafetensorsFile& file, const std::string& name) {
  return read_tensor<float, float>(file, name);
}

std::vector<int32_t> token_tensor(const SafetensorsFile& file, const std::string& name) {
  return read_tensor<int64_t, int32_t>(file, name);
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

std::vector<float> normalized(std::vector<float> v) {
  double sum = 0;
  for (float x : v) sum += double{x} * x;
  for (float& x : v) x = static_cast<float>(x / std::sqrt(sum));
  return v;
}

PoolingFixture::PoolingFixture(const std::string& name, PoolingFlags flags, std::unique_ptr<Backend> on)
    : backend(on ? std::move(on) : make_cpu_backend(2)),
      dir(fixture_path("hf/" + name)),
      loaded(load_model({.model_path = dir, .pooling = flags}, *backend)),
      reference(dir + "/reference.safetensors"),
      tokenizer(text::Tokenizer::from_file(dir)) {
  std::ifstream in(dir + "/reference.json");
  facts = nlohmann::json::parse(in);
}

std::vector<float> every_position_outputs(ModelRunner& runner, const std::vector<int32_t>& ids) {
  DirectSession session(runner);
  const int64_t seq = session.add_sequence();
  const Tensor out = session.step({{.seq_id = seq, .token_ids = ids, .logits = LogitsMode::kAll}})[0];
  const float* data = out.data_as<const float>();
  return {data, data + out.numel()};
}

std::vector<std::vector<float>> pool_requests(CheckedEngine& engine, std::vector<GenerationRequest> requests) {
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (GenerationRequest& request : requests) streams.push_back(engine.submit(std::move(request)));
  std::vector<std::vector<float>> out;
  for (auto& stream : streams) {
    std::vector<float> pooled;
    while (auto update = stream->pop(std::chrono::milliseconds(120000))) {
      EXPECT_TRUE(update->error.empty()) << update->error;
      if (!update->pooled.empty()) pooled = update->pooled;
      if (update->finished) break;
    }
    out.push_back(std::move(pooled));
  }
  return out;
}

std::vector<std::vector<float>> pool_all(CheckedEngine& engine, const std::vector<std::vector<int32_t>>& prompts,
                                         int32_t dimensions) {
  std::vector<GenerationRequest> requests;
  for (const auto& ids : prompts)
    requests.push_back({.prompt_ids = ids, .max_tokens = 0, .pooling = PoolingRequest{dimensions}});
  return pool_requests(engine, std::move(requests));
}

std::vector<float> pool_one(CheckedEngine& engine, const std::vector<int32_t>& ids, int32_t dimensions) {
  return pool_all(engine, {ids}, dimensions).front();
}

void expect_scores_alone_and_batched(CheckedEngine& engine, const PoolingFixture& f,
                                     const std::vector<GenerationRequest>& requests, float tolerance) {
  std::vector<std::vector<float>> alone;
  for (const GenerationRequest& request : requests) alone.push_back(pool_requests(engine, {request}).front());
  const std::vector<std::vector<float>> batched = pool_requests(engine, requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    ASSERT_EQ(alone[i].size(), 1u);
    EXPECT_LT(std::abs(alone[i][0] - f32_tensor(f.reference, "score_" + std::to_string(i))[0]), tolerance)
        << "pair " << i;
    EXPECT_LT(max_abs_diff(batched[i], alone[i]), 1e-6f) << "batched, pair " << i;
  }
}

}  // namespace strata::test
