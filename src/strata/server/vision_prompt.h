// A chat prompt with images made ready for the engine, as transformers' Qwen-VL processor does
// it: each image preprocessed and encoded by the vision tower, the template's one image
// placeholder per image repeated once per merged patch, and the images placed on the tokens.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/image/image_processor.h"
#include "strata/model/multimodal_prompt.h"
#include "strata/server/server_options.h"
#include "strata/text/tokenizer.h"

namespace strata {
class VisionTower;
struct LoadedModel;
}

namespace strata::server {

// What a model that takes images serves them with (null in ServedModel: text only).
struct VisionInput {
  const VisionTower* tower = nullptr;
  ImageProcessorConfig processor;  // preprocessor_config.json
  int32_t image_token_id = -1;     // config.json's placeholder
  ImageInputOptions limits;
};

// A model with a vision tower takes images, preprocessed as the preprocessor_config.json in
// `model_path` says; nullopt for a text-only model. Throws strata::Error for a broken config.
std::optional<VisionInput> vision_input(const LoadedModel& loaded, const std::string& model_path,
                                        const ImageInputOptions& limits);

struct VisionPrompt {
  std::vector<int32_t> ids;
  std::shared_ptr<const MultimodalPrompt> images;
};

// `prompt`: the rendered text with one placeholder token per image, in the order of `image_urls`.
// A 400 naming `field` when the counts differ, an image cannot be read, or there are too many.
VisionPrompt encode_with_images(const VisionInput& vision, const text::Tokenizer& tokenizer, const std::string& prompt,
                                const std::vector<std::string>& image_urls, const char* field);
// The same token ids without running the vision tower (/tokenize): the images are only
// preprocessed, for their grids.
std::vector<int32_t> tokenize_with_images(const VisionInput& vision, const text::Tokenizer& tokenizer,
                                          const std::string& prompt, const std::vector<std::string>& image_urls,
                                          const char* field);

}  // namespace strata::server
