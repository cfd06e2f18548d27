#include "strata/model/multimodal_prompt.h"

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
