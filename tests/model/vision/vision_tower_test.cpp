// The Qwen3.5 vision tower on the CPU against transformers (qwen3_5_vision fixture): the HF
// processor's pixel values through our tower give transformers' merged embeddings, and those
// embeddings in the text model give transformers' logits within 2e-3.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "model/fixture_support.h"
#include "model/vision_fixture_support.h"
#include "strata/core/error.h"
#include "strata/model/vision/vision_tower.h"
#include "test_support.h"

namespace strata::test {
namespace {

float max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  float m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::fabs(a.data_as<float>()[i] - b.data_as<float>()[i]));
  return m;
}

TEST(VisionTower, PixelValuesGiveTransformersImageEmbeddings) {
  auto cpu = make_cpu_backend(2);
  const VisionFixture fixture = load_vision_fixture();
  const LoadedModel loaded = load_model({.model_path = fixture.dir}, *cpu);
  const VisionTower* tower = loaded.model->vision_tower();
  ASSERT_NE(tower, nullptr);
  for (const VisionImage& image : fixture.images) {
    const Tensor embeds = tower->encode(image.pixel_values, image.grid_thw);
    EXPECT_LT(max_abs_diff(embeds, image.embeds), 1e-4f);
    EXPECT_GT(max_abs_diff(embeds, Tensor::host(DType::kF32, embeds.shape())), 0.1f);  // not zeros
  }
}

TEST(VisionTower, OwnEmbeddingsGiveTransformersLogits) {
  auto cpu = make_cpu_backend(2);
  const VisionFixture fixture = load_vision_fixture();
  const LoadedModel loaded = load_model({.model_path = fixture.dir}, *cpu);
  std::vector<Tensor> embeds;
  for (const VisionImage& image : fixture.images)
    embeds.push_back(loaded.model->vision_tower()->encode(image.pixel_values, image.grid_thw));
  ModelRunner runner(*loaded.model, *cpu, {});
  for (const VisionSequence& seq : fixture.sequences) {
    const int64_t rows = static_cast<int64_t>(seq.tokens.size());
    const Tensor logits = run_sequence(runner, seq.tokens, seq.prompt_len, 0, seq.prompt(fixture, embeds));
    EXPECT_LT(max_abs_diff_rows(logits, seq.logits, 0, rows), 2e-3f);
  }
}

// The qwen3_5 fixture stores its tower in bf16 (patch 4, one block): the linears read bf16 rows,
// the norms and position table are widened at load.
TEST(VisionTower, Bf16CheckpointTowerEncodes) {
  auto cpu = make_cpu_backend(2);
  const LoadedModel loaded = load_model({.model_path = fixture_path("hf/qwen3_5")}, *cpu);
  const VisionTower* tower = loaded.model->vision_tower();
  ASSERT_NE(tower, nullptr);
  const Tensor pixels = random_f32({4 * 6, tower->options().patch_dim()}, 11);
  const Tensor embeds = tower->encode(pixels, {1, 4, 6});
  ASSERT_EQ(embeds.shape(), (Shape{6, loaded.config.hidden_size}));
  for (int64_t i = 0; i < embeds.numel(); ++i) ASSERT_TRUE(std::isfinite(embeds.data_as<float>()[i])) << i;
  EXPECT_GT(max_abs_diff(embeds, Tensor::host(DType::kF32, embeds.shape())), 0.01f);
}

// The tower keeps its workspaces between images: a smaller image after a larger one, and two
// threads encoding at once (they take turns), give exactly what a fresh encode gives.
TEST(VisionTower, EncodesOfOtherSizesAndThreadsGiveTheSameEmbeddings) {
  auto cpu = make_cpu_backend(2);
  const VisionFixture fixture = load_vision_fixture();
  const LoadedModel loaded = load_model({.model_path = fixture.dir}, *cpu);
  const VisionTower* tower = loaded.model->vision_tower();
  ASSERT_GE(fixture.images.size(), 2u);
  ASSERT_NE(fixture.images[0].grid_thw, fixture.images[1].grid_thw);
  std::vector<Tensor> first;
  for (const VisionImage& image : fixture.images) first.push_back(tower->encode(image.pixel_values, image.grid_thw));
  std::vector<Tensor> other_thread;
  std::thread encoder([&] {
    for (auto it = fixture.images.rbegin(); it != fixture.images.rend(); ++it)
      other_thread.insert(other_thread.begin(), tower->encode(it->pixel_values, it->grid_thw));
  });
  std::vector<Tensor> again;
  for (const VisionImage& image : fixture.images) again.push_back(tower->encode(image.pixel_values, image.grid_thw));
  encoder.join();
  for (size_t j = 0; j < first.size(); ++j) {
    EXPECT_EQ(max_abs_diff(again[j], first[j]), 0.0f) << "image " << j;
    EXPECT_EQ(max_abs_diff(other_thread[j], first[j]), 0.0f) << "image " << j << " from another thread";
  }
}

TEST(VisionTower, PixelValuesOfAnotherGridAreRefused) {
  auto cpu = make_cpu_backend(1);
  const VisionFixture fixture = load_vision_fixture();
  const LoadedModel loaded = load_model({.model_path = fixture.dir}, *cpu);
  EXPECT_THROW(loaded.model->vision_tower()->encode(fixture.images[0].pixel_values, fixture.images[1].grid_thw),
               Error);
}

}  // namespace
}  // namespace strata::test
