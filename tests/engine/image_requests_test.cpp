// Requests with images through the engine (qwen3_5_vision fixture, images encoded by our tower):
// greedy tokens are transformers' own (with n-gram speculation too), a prefix-cache hit with the
// same images equals a cold run, other images behind the same placeholders get no hit, batched
// requests equal each alone, and a model without a vision tower refuses images.
#include "engine/prefix_cache_test_support.h"
#include "model/vision_fixture_support.h"
#include "strata/core/error.h"
#include "strata/model/vision/vision_tower.h"
#include "strata/text/id_tokenizer.h"
#include "test_support.h"

namespace strata {
namespace {

using test::CachedRunResult;

class ImageRequests : public test::PrefixCacheEngineTest {
 protected:
  void SetUp() override {
    PrefixCacheEngineTest::SetUp();
    for (const test::VisionImage& image : fixture_.images)
      embeds_.push_back(loaded_.model->vision_tower()->encode(image.pixel_values, image.grid_thw));
  }
  GenerationRequest request(size_t i, std::vector<Tensor> embeds = {}) const {
    const test::VisionSequence& seq = fixture_.sequences[i];
    GenerationRequest r = test::greedy_request({seq.tokens.begin(), seq.tokens.begin() + seq.prompt_len});
    r.images = seq.prompt(fixture_, embeds.empty() ? embeds_ : embeds);
    return r;
  }
  test::VisionFixture fixture_ = test::load_vision_fixture();
  std::vector<Tensor> embeds_;
};

TEST_P(ImageRequests, GreedyTokensAreTransformers) {
  auto engine = this->engine(false);
  for (size_t i = 0; i < fixture_.sequences.size(); ++i) {
    const test::VisionSequence& seq = fixture_.sequences[i];
    const CachedRunResult got = test::wait_result(*engine->submit(request(i)));
    EXPECT_EQ(got.tokens, std::vector<int32_t>(seq.tokens.begin() + seq.prompt_len,
                                               seq.tokens.begin() + seq.prompt_len + 4)) << i;
  }
}

// n-gram drafts (the greedy answers repeat, so drafts are proposed and accepted) verified in rows
// past the images: the 16 tokens transformers chose, and the same log-probabilities as without.
TEST_P(ImageRequests, SpeculativeDecodingKeepsTransformersTokens) {
  auto engine = this->engine(EngineOptions{.max_num_batched_tokens = 64,
                                           .speculative = {.num_speculative_tokens = 3, .prompt_lookup_min = 1,
                                                           .prompt_lookup_max = 3}});
  for (size_t i = 0; i < fixture_.sequences.size(); ++i) {
    const test::VisionSequence& seq = fixture_.sequences[i];
    GenerationRequest r = request(i);
    r.max_tokens = 16;
    const CachedRunResult got = test::wait_result(*engine->submit(r));
    EXPECT_EQ(got.tokens, std::vector<int32_t>(seq.tokens.begin() + seq.prompt_len, seq.tokens.end())) << i;
    expect_same(got, cold(r));
  }
  EXPECT_GT(engine->stats().spec_accepted_tokens_total, 0);
}

// Steps of 7 tokens: prompt chunks end inside images, each chunk scattering its part of them.
TEST_P(ImageRequests, ChunksCuttingThroughImagesEqualAWholePrefill) {
  auto chunked = engine(false, 128, /*budget=*/7);
  for (size_t i = 0; i < fixture_.sequences.size(); ++i)
    expect_same(test::wait_result(*chunked->submit(request(i))), cold(request(i)));
}

TEST_P(ImageRequests, PrefixHitWithTheSameImagesEqualsAColdRun) {
  auto warm = engine(true);
  test::wait_result(*warm->submit(request(1)));
  const CachedRunResult hit = test::wait_result(*warm->submit(request(1)));
  EXPECT_GT(hit.num_cached_tokens, 0);  // a block boundary with a DeltaNet snapshot
  expect_same(hit, cold(request(1)));
}

// The same tokens with another image's content behind the placeholders: no block is shared.
TEST_P(ImageRequests, OtherImagesBehindTheSamePlaceholdersGetNoHit) {
  std::vector<Tensor> other = {Tensor::host(DType::kF32, embeds_[0].shape()), embeds_[1]};
  for (int64_t k = 0; k < other[0].numel(); ++k)
    other[0].data_as<float>()[k] = -0.5f * embeds_[0].data_as<float>()[other[0].numel() - 1 - k];
  GenerationRequest changed = request(0, other);
  auto warm = engine(true);
  test::wait_result(*warm->submit(request(0)));
  const CachedRunResult miss = test::wait_result(*warm->submit(changed));
  EXPECT_EQ(miss.num_cached_tokens, 0);
  expect_same(miss, cold(changed));
  const CachedRunResult first = cold(request(0));
  EXPECT_NE(miss.logprobs.front().logprob, first.logprobs.front().logprob);  // the image matters
}

TEST_P(ImageRequests, BatchedWithTextEqualsAlone) {
  auto engine = this->engine(true);
  const GenerationRequest text = test::greedy_request(test::cache_prompt(20, 3));
  std::vector<std::shared_ptr<RequestStream>> streams = {engine->submit(request(0)), engine->submit(request(1)),
                                                         engine->submit(text)};
  expect_same(test::wait_result(*streams[0]), cold(request(0)));
  expect_same(test::wait_result(*streams[1]), cold(request(1)));
  expect_same(test::wait_result(*streams[2]), cold(text));
}

TEST_P(ImageRequests, ImagesThatDoNotFitThePromptAreRefused) {
  auto engine = this->engine(false);
  GenerationRequest shifted = request(0);
  shifted.prompt_ids.insert(shifted.prompt_ids.begin(), 7);  // the placeholders moved one token on
  EXPECT_THROW(engine->submit(shifted), Error);
  GenerationRequest wrong_width = request(0, {Tensor::host(DType::kF32, {6, 32}), embeds_[1]});
  EXPECT_THROW(engine->submit(wrong_width), Error);
}

INSTANTIATE_TEST_SUITE_P(Vision, ImageRequests, ::testing::Values("qwen3_5_vision"));

TEST(ImageRequestsOnATextModel, AreRefusedSayingSo) {
  auto cpu = make_cpu_backend(1);
  const LoadedModel loaded = load_model({.model_path = test::fixture_path("hf/qwen3")}, *cpu);
  ModelRunner runner(*loaded.model, *cpu, {.num_kv_blocks = 16});
  const auto tokenizer = text::make_id_tokenizer(static_cast<int32_t>(loaded.config.vocab_size));
  test::CheckedEngine engine(runner, *tokenizer, {}, {});
  GenerationRequest r = test::greedy_request({5, 9, 9, 7});
  r.images = std::make_shared<const MultimodalPrompt>(std::vector<PromptImage>{
      {.first_token = 1, .grid_h = 1, .grid_w = 2,
       .embeds = test::random_f32({2, loaded.config.hidden_size}, 3)}});
  try {
    engine.submit(r);
    ADD_FAILURE() << "accepted images on a text model";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("takes text only"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
