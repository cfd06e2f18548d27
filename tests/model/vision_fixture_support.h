// The qwen3_5_vision fixture (tests/fixtures/hf/qwen3_5_vision, written by
// scripts/fixtures/make_vision_fixture.py): its images as the HF processor and the vision tower
// gave them, and its prompts with their MRoPE positions and transformers' logits.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "strata/core/tensor.h"
#include "strata/model/multimodal_prompt.h"

namespace strata::test {

inline constexpr int32_t kImageTokenId = 500;  // the fixture config's image_token_id

struct VisionImage {
  Tensor pixel_values;             // [patches, 3 * 2 * 16 * 16] f32
  std::array<int32_t, 3> grid_thw;  // patches (not merged)
  Tensor embeds;                   // [patches / 4, 64] f32: transformers' vision tower output
};

struct VisionFixture;

struct VisionSequence {
  std::vector<int32_t> tokens;     // prompt then 16 greedy tokens
  int32_t prompt_len = 0;
  std::vector<int32_t> images;     // fixture image per placeholder run, in prompt order
  std::vector<int32_t> positions;  // [3, tokens] get_rope_index
  Tensor logits;                   // [tokens, vocab] f32

  // The prompt's images with `embeds[j]` for fixture image j (default: transformers' embeddings).
  std::shared_ptr<const MultimodalPrompt> prompt(const VisionFixture& fixture,
                                                 const std::vector<Tensor>& embeds = {}) const;
};

struct VisionFixture {
  std::string dir;
  std::vector<VisionImage> images;
  std::vector<VisionSequence> sequences;
};

VisionFixture load_vision_fixture();

}  // namespace strata::test
