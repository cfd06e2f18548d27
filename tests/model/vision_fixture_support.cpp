#include "model/vision_fixture_support.h"

#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/weights/safetensors.h"
#include "test_support.h"

namespace strata::test {
namespace {

Tensor copy_f32(const SafetensorsFile& file, const std::string& name) {
  const WeightInfo* info = file.find(name);
  STRATA_CHECK_MSG(info != nullptr && info->dtype == DType::kF32, "fixture tensor {}", name);
  Tensor out = Tensor::host(DType::kF32, info->shape);
  std::memcpy(out.data(), info->data, out.nbytes());
  return out;
}

std::vector<int32_t> copy_i64(const SafetensorsFile& file, const std::string& name) {
  const WeightInfo* info = file.find(name);
  STRATA_CHECK_MSG(info != nullptr && info->dtype == DType::kI64, "fixture tensor {}", name);
  const auto* data = static_cast<const int64_t*>(info->data);
  return std::vector<int32_t>(data, data + info->shape.numel());
}

}  // namespace

std::shared_ptr<const MultimodalPrompt> VisionSequence::prompt(const VisionFixture& fixture,
                                                               const std::vector<Tensor>& embeds) const {
  std::vector<PromptImage> placed;
  for (int32_t i = 0; i < static_cast<int32_t>(tokens.size()); ++i) {
    if (tokens[i] != kImageTokenId || (i > 0 && tokens[i - 1] == kImageTokenId)) continue;
    const int32_t j = images.at(placed.size());
    const VisionImage& image = fixture.images[j];
    placed.push_back({.first_token = i, .grid_t = image.grid_thw[0], .grid_h = image.grid_thw[1] / 2,
                      .grid_w = image.grid_thw[2] / 2, .embeds = embeds.empty() ? image.embeds : embeds[j]});
  }
  return std::make_shared<const MultimodalPrompt>(std::move(placed));
}

VisionFixture load_vision_fixture() {
  VisionFixture f{.dir = fixture_path("hf/qwen3_5_vision")};
  const SafetensorsFile file(f.dir + "/reference.safetensors");
  std::ifstream in(f.dir + "/reference.json");
  const nlohmann::json ref = nlohmann::json::parse(in);
  for (int j = 0; file.find("grid_thw_" + std::to_string(j)) != nullptr; ++j) {
    const std::vector<int32_t> grid = copy_i64(file, "grid_thw_" + std::to_string(j));
    f.images.push_back({.pixel_values = copy_f32(file, "pixel_values_" + std::to_string(j)),
                        .grid_thw = {grid[0], grid[1], grid[2]},
                        .embeds = copy_f32(file, "image_embeds_" + std::to_string(j))});
  }
  for (size_t i = 0; i < ref["sequences"].size(); ++i) {
    const std::string n = std::to_string(i);
    f.sequences.push_back({.tokens = copy_i64(file, "tokens_" + n),
                           .prompt_len = ref["sequences"][i]["prompt_len"].get<int32_t>(),
                           .images = ref["sequences"][i]["images"].get<std::vector<int32_t>>(),
                           .positions = copy_i64(file, "positions_" + n),
                           .logits = copy_f32(file, "logits_" + n)});
  }
  return f;
}

}  // namespace strata::test
