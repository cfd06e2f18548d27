// The images of one prompt: where each one's placeholder tokens sit, its merged patch grid (which
// gives its tokens' MRoPE positions) and its embeddings (which replace the placeholders' token
// embeddings). Text tokens have three equal position streams, shifted by the images before them,
// so after the last image a sequence decodes with plain 1-D positions (index + shift).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "strata/core/tensor.h"

namespace strata {

struct PromptImage {
  int32_t first_token = 0;  // index in the prompt of its first placeholder token
  int32_t grid_t = 1, grid_h = 0, grid_w = 0;  // the merged grid: one token per (t, h, w), row-major
  Tensor embeds;            // [num_tokens, hidden] f32 host: the vision tower's output

  int32_t num_tokens() const { return grid_t * grid_h * grid_w; }
};

class MultimodalPrompt {
 public:
  // Throws strata::Error when images overlap, are out of order or a grid is empty.
  explicit MultimodalPrompt(std::vector<PromptImage> images);

  // (temporal, height, width) rotary positions of the token at `index`, as transformers'
  // get_rope_index gives them: an image's tokens sit on its grid from the position it starts at,
  // and the text after it resumes max(grid_h, grid_w) later.
  std::array<int32_t, 3> rope_position(int32_t index) const;
  // The image whose placeholders cover `index`, or nullptr for a text token.
  const PromptImage* image_at(int32_t index) const;
  const std::vector<PromptImage>& images() const { return images_; }
  // Of every image's embeddings and place (computed here, never taken from a caller): prompts
  // with other images or placements differ.
  uint64_t content_hash() const;
  // Throws strata::Error unless every image's placeholders are `image_token_id` tokens of the
  // prompt and its embeddings have one row of `hidden_size` per placeholder.
  void check_against(const std::vector<int32_t>& prompt_ids, int32_t image_token_id, int64_t hidden_size) const;

 private:
  std::vector<PromptImage> images_;
  std::vector<int32_t> shift_before_;  // [images] text position minus index just before each image
};

}  // namespace strata
