// The vision tower at a real Qwen3.5 tower's shapes (hidden 1152, 16 heads of 72, MLP 4304, a
// 48 x 48 position table; two blocks) on the CUDA backend against the CPU backend, on the same
// dummy bf16 weights: images of 1024 patches (16 query tiles of the attention kernel), a long thin
// one, and one merge block (the merger's GEMV path). Skipped without a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "ops/cuda_op_support.h"
#include "strata/model/model_loader.h"
#include "strata/model/vision/vision_tower.h"
#include "test_support.h"

namespace strata::test {
namespace {

// The qwen3_5_vision fixture's config (a tiny text model) with a real-sized tower.
std::string real_tower_config() {
  const std::string dir = temp_dir() + "/qwen3_5-real-vision-tower";
  std::filesystem::create_directories(dir);
  std::ifstream in(fixture_path("hf/qwen3_5_vision/config.json"));
  nlohmann::json config = nlohmann::json::parse(in);
  nlohmann::json& vision = config["vision_config"];
  vision["hidden_size"] = 1152;
  vision["num_heads"] = 16;
  vision["intermediate_size"] = 4304;
  vision["depth"] = 2;
  vision["num_position_embeddings"] = 2304;
  vision["out_hidden_size"] = config["text_config"]["hidden_size"];
  write_file_atomically(dir + "/config.json", config.dump(2));
  return dir;
}

TEST(CudaVisionTower, RealShapesMatchTheCpuTower) {
  auto gpu = make_cuda_backend(0);
  if (!gpu) GTEST_SKIP() << "no CUDA GPU visible: CUDA vision tests skipped";
  auto cpu = make_cpu_backend(static_cast<int>(std::thread::hardware_concurrency()));
  const LoadOptions options{.model_path = real_tower_config(), .load_format = LoadFormat::kDummy};
  const LoadedModel on_cpu = load_model(options, *cpu);
  const LoadedModel on_gpu = load_model(options, *gpu);
  const VisionTower* cpu_tower = on_cpu.model->vision_tower();
  const VisionTower* gpu_tower = on_gpu.model->vision_tower();
  ASSERT_NE(gpu_tower, nullptr);
  ASSERT_EQ(gpu_tower->options().block.hidden_size / gpu_tower->options().block.num_heads, 72);
  for (const std::array<int32_t, 3>& grid : std::vector<std::array<int32_t, 3>>{{1, 32, 32}, {1, 6, 94}, {1, 2, 2}}) {
    const int64_t patches = static_cast<int64_t>(grid[0]) * grid[1] * grid[2];
    const Tensor pixels = random_rounded({patches, gpu_tower->options().patch_dim()}, 101 + grid[2], -2.f, 2.f);
    const Tensor ref = cpu_tower->encode(pixels, grid);
    const Tensor got = gpu_tower->encode(pixels, grid);
    const std::string what = "grid " + std::to_string(grid[1]) + "x" + std::to_string(grid[2]);
    ASSERT_EQ(got.shape(), ref.shape()) << what;
    const CompareResult c = compare(got, ref);
    std::printf("[cuda vision tower, real shapes] %s: rel_l2 %.2e against the CPU\n", what.c_str(), c.rel_l2);
    EXPECT_TRUE(c.finite) << what;
    EXPECT_LT(c.rel_l2, 2e-2) << what << ": bf16 activations through two blocks and the merger";
    double ref_sq = 0;
    for (int64_t i = 0; i < ref.numel(); ++i) ref_sq += static_cast<double>(ref.data_as<float>()[i]) * ref.data_as<float>()[i];
    EXPECT_GT(ref_sq, 1.0) << what << ": the CPU gave zeros";
  }
}

}  // namespace
}  // namespace strata::test
