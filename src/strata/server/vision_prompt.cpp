#include "strata/server/vision_prompt.h"

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/model/model_loader.h"
#include "strata/model/vision/vision_tower.h"
#include "strata/server/api_error.h"
#include "strata/server/image_url.h"

namespace strata::server {
namespace {

ProcessedImage prepare_image(const VisionInput& vision, const std::string& url, const std::string& what,
                             const char* field) {
  const RgbImage image = load_image_url(url, vision.limits, what, field);
  try {
    return process_image(image, vision.processor);
  } catch (const Error& e) {
    throw bad_request(fmt::format("{}: {}", what, e.what()), field);
  }
}

// Each image preprocessed, in order; a 400 past the per-prompt limit.
std::vector<ProcessedImage> prepare_images(const VisionInput& vision, const std::vector<std::string>& image_urls,
                                           const char* field) {
  if (static_cast<int64_t>(image_urls.size()) > vision.limits.max_images_per_prompt)
    throw bad_request(fmt::format("the request has {} images, more than the {} a prompt may hold "
                                  "(--limit-mm-per-prompt)", image_urls.size(), vision.limits.max_images_per_prompt),
                      field);
  std::vector<ProcessedImage> images;
  for (size_t k = 0; k < image_urls.size(); ++k)
    images.push_back(prepare_image(vision, image_urls[k], fmt::format("{}: image {}", field, k), field));
  return images;
}

int32_t num_image_tokens(const VisionInput& vision, const ProcessedImage& image) {
  const auto [t, h, w] = image.grid_thw;
  return t * h * w / (vision.processor.merge_size * vision.processor.merge_size);
}

// The prompt with the k-th placeholder repeated counts[k] times.
std::string expand_placeholders(const std::string& prompt, const std::string& placeholder,
                                const std::vector<int32_t>& counts, const char* field) {
  std::string out;
  size_t from = 0, k = 0;
  for (size_t at = prompt.find(placeholder); at != std::string::npos; at = prompt.find(placeholder, from), ++k) {
    if (k == counts.size()) break;
    out.append(prompt, from, at - from);
    for (int32_t i = 0; i < counts[k]; ++i) out += placeholder;
    from = at + placeholder.size();
  }
  if (k != counts.size() || prompt.find(placeholder, from) != std::string::npos)
    throw bad_request(fmt::format("the chat template placed a different number of image placeholders ({}) than the "
                                  "request has images ({}); the model's template must render each image part once "
                                  "(and the text must not hold {} itself)", placeholder, counts.size(), placeholder),
                      field);
  return out + prompt.substr(from);
}

// The prompt's token ids with each image's placeholder repeated once per merged patch.
std::vector<int32_t> expanded_ids(const VisionInput& vision, const text::Tokenizer& tokenizer,
                                  const std::string& prompt, const std::vector<ProcessedImage>& images,
                                  const char* field) {
  const std::optional<std::string> placeholder = tokenizer.id_to_token(vision.image_token_id);
  if (!placeholder) fail("the tokenizer has no token {} (config.json's image_token_id)", vision.image_token_id);
  std::vector<int32_t> counts;
  for (const ProcessedImage& image : images) counts.push_back(num_image_tokens(vision, image));
  return tokenizer.encode(expand_placeholders(prompt, *placeholder, counts, field), /*add_special_tokens=*/false);
}

}  // namespace

std::optional<VisionInput> vision_input(const LoadedModel& loaded, const std::string& model_path,
                                        const ImageInputOptions& limits) {
  const VisionTower* tower = loaded.model->vision_tower();
  if (tower == nullptr) return std::nullopt;
  const int64_t image_token_id = loaded.config.get_int("image_token_id", -1);
  if (image_token_id < 0) fail("config.json of this multimodal model names no image_token_id");
  return VisionInput{.tower = tower, .processor = read_image_processor_config(model_path),
                     .image_token_id = static_cast<int32_t>(image_token_id), .limits = limits};
}

std::vector<int32_t> tokenize_with_images(const VisionInput& vision, const text::Tokenizer& tokenizer,
                                          const std::string& prompt, const std::vector<std::string>& image_urls,
                                          const char* field) {
  return expanded_ids(vision, tokenizer, prompt, prepare_images(vision, image_urls, field), field);
}

VisionPrompt encode_with_images(const VisionInput& vision, const text::Tokenizer& tokenizer, const std::string& prompt,
                                const std::vector<std::string>& image_urls, const char* field) {
  const std::vector<ProcessedImage> images = prepare_images(vision, image_urls, field);
  VisionPrompt out{.ids = expanded_ids(vision, tokenizer, prompt, images, field)};
  std::vector<PromptImage> placed;
  for (int32_t i = 0; i < static_cast<int32_t>(out.ids.size()) && placed.size() < images.size(); ++i) {
    if (out.ids[i] != vision.image_token_id || (i > 0 && out.ids[i - 1] == vision.image_token_id)) continue;
    const ProcessedImage& image = images[placed.size()];
    const int32_t merge = vision.processor.merge_size;
    placed.push_back({.first_token = i, .grid_t = image.grid_thw[0], .grid_h = image.grid_thw[1] / merge,
                      .grid_w = image.grid_thw[2] / merge,
                      .embeds = vision.tower->encode(image.pixel_values, image.grid_thw)});
  }
  if (placed.size() != images.size())
    throw bad_request(fmt::format("the tokenized prompt holds {} image placeholder runs for {} images",
                                  placed.size(), images.size()), field);
  out.images = std::make_shared<const MultimodalPrompt>(std::move(placed));
  return out;
}

}  // namespace strata::server
