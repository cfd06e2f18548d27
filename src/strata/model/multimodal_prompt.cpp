#include "strata/model/multimodal_prompt.h"

#include <xxhash.h>

#include <algorithm>

#include "strata/core/error.h"

namespace strata {

MultimodalPrompt::MultimodalPrompt(std::vector<PromptImage> images) : images_(std::move(images)) {
  int32_t shift = 0, end = 0;
  for (const PromptImage& image : images_) {
    if (image.grid_t < 1 || image.grid_h < 1 || image.grid_w < 1)
      fail("an image's merged grid {}x{}x{} is empty; every side must be at least 1", image.grid_t, image.grid_h,
           image.grid_w);
    if (image.first_token < end)
      fail("the image at token {} overlaps the one before it (which ends at token {}); images must be given in "
           "prompt order", image.first_token, end);
    shift_before_.push_back(shift);
    shift += std::max(image.grid_h, image.grid_w) - image.num_tokens();
    end = image.first_token + image.num_tokens();
  }
}

std::array<int32_t, 3> MultimodalPrompt::rope_position(int32_t index) const {
  int32_t shift = 0;
  for (size_t i = 0; i < images_.size(); ++i) {
    const PromptImage& image = images_[i];
    if (index < image.first_token) break;
    const int32_t k = index - image.first_token;
    if (k < image.num_tokens()) {
      const int32_t start = image.first_token + shift_before_[i], plane = image.grid_h * image.grid_w;
      return {start + k / plane, start + (k % plane) / image.grid_w, start + k % image.grid_w};
    }
    shift = shift_before_[i] + std::max(image.grid_h, image.grid_w) - image.num_tokens();
  }
  return {index + shift, index + shift, index + shift};
}

const PromptImage* MultimodalPrompt::image_at(int32_t index) const {
  for (const PromptImage& image : images_)
    if (index >= image.first_token && index < image.first_token + image.num_tokens()) return &image;
  return nullptr;
}

}  // namespace strata

namespace strata {

uint64_t MultimodalPrompt::content_hash() const {
  uint64_t hash = 0;
  for (const PromptImage& image : images_) {
    const uint64_t place[] = {static_cast<uint64_t>(image.first_token), static_cast<uint64_t>(image.grid_t),
                              static_cast<uint64_t>(image.grid_h), static_cast<uint64_t>(image.grid_w)};
    hash = XXH3_64bits_withSeed(place, sizeof(place), hash);
    if (image.embeds.defined()) hash = XXH3_64bits_withSeed(image.embeds.data(), image.embeds.nbytes(), hash);
  }
  return hash;
}

void MultimodalPrompt::check_against(const std::vector<int32_t>& prompt_ids, int32_t image_token_id,
                                     int64_t hidden_size) const {
  for (size_t i = 0; i < images_.size(); ++i) {
    const PromptImage& image = images_[i];
    const int64_t end = static_cast<int64_t>(image.first_token) + image.num_tokens();
    if (end > static_cast<int64_t>(prompt_ids.size()))
      fail("image {} needs tokens [{}, {}) but the prompt has {}", i, image.first_token, end, prompt_ids.size());
    for (int64_t t = image.first_token; t < end; ++t)
      if (prompt_ids[t] != image_token_id)
        fail("image {}: prompt token {} is {}, not the image placeholder {}", i, t, prompt_ids[t], image_token_id);
    if (!image.embeds.defined() || image.embeds.dtype() != DType::kF32 || image.embeds.rank() != 2 ||
        image.embeds.dim(0) != image.num_tokens() || image.embeds.dim(1) != hidden_size)
      fail("image {}: its embeddings must be [{}, {}] f32", i, image.num_tokens(), hidden_size);
  }
}

}  // namespace strata
