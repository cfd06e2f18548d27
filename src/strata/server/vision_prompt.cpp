#include "strata/server/vision_prompt.h"

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/model/vision/vision_tower.h"
#include "strata/server/api_error.h"
#include "strata/server/image_url.h"

namespace strata::server {
namespace {

struct EncodedImage {
  std::array<int32_t, 3> merged_grid;
  Tensor embeds;  // [tokens, hidden] f32
};

EncodedImage encode_image(const VisionInput& vision, const std::string& url, const std::string& what,
                          const char* field) {
  const RgbImage image = load_image_url(url, vision.limits, what, field);
  ProcessedImage processed;
  try {
    processed = process_image(image, vision.processor);
  } catch (const Error& e) {
    throw bad_request(fmt::format("{}: {}", what, e.what()), field);
  }
  const auto merge = static_cast<int32_t>(vision.processor.merge_size);
  const auto [t, h, w] = processed.grid_thw;
  return {.merged_grid = {t, h / merge, w / merge}, .embeds = vision.tower->encode(processed.pixel_values,
                                                                                  processed.grid_thw)};
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

}  // namespace

VisionPrompt encode_with_images(const VisionInput& vision, const text::Tokenizer& tokenizer, const std::string& prompt,
                                const std::vector<std::string>& image_urls, const char* field) {
  if (static_cast<int64_t>(image_urls.size()) > vision.limits.max_images_per_prompt)
    throw bad_request(fmt::format("the request has {} images, more than the {} a prompt may hold "
                                  "(--limit-mm-per-prompt)", image_urls.size(), vision.limits.max_images_per_prompt),
                      field);
  std::vector<EncodedImage> encoded;
  std::vector<int32_t> counts;
  for (size_t k = 0; k < image_urls.size(); ++k) {
    encoded.push_back(encode_image(vision, image_urls[k], fmt::format("{}: image {}", field, k), field));
    counts.push_back(static_cast<int32_t>(encoded.back().embeds.dim(0)));
  }
  const std::optional<std::string> placeholder = tokenizer.id_to_token(vision.image_token_id);
  if (!placeholder) fail("the tokenizer has no token {} (config.json's image_token_id)", vision.image_token_id);
  VisionPrompt out{.ids = tokenizer.encode(expand_placeholders(prompt, *placeholder, counts, field),
                                           /*add_special_tokens=*/false)};
  std::vector<PromptImage> placed;
  for (int32_t i = 0; i < static_cast<int32_t>(out.ids.size()); ++i) {
    if (out.ids[i] != vision.image_token_id || (i > 0 && out.ids[i - 1] == vision.image_token_id)) continue;
    if (placed.size() == encoded.size()) break;
    const EncodedImage& image = encoded[placed.size()];
    placed.push_back({.first_token = i, .grid_t = image.merged_grid[0], .grid_h = image.merged_grid[1],
                      .grid_w = image.merged_grid[2], .embeds = image.embeds});
  }
  if (placed.size() != encoded.size())
    throw bad_request(fmt::format("the tokenized prompt holds {} image placeholder runs for {} images",
                                  placed.size(), encoded.size()), field);
  out.images = std::make_shared<const MultimodalPrompt>(std::move(placed));
  return out;
}

}  // namespace strata::server
