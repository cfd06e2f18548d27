// MultimodalPrompt's MRoPE positions against what transformers' get_rope_index wrote for the
// qwen3_5_vision fixture (exact), and its refusals of images that cannot be placed.
#include <gtest/gtest.h>

#include "model/vision_fixture_support.h"
#include "strata/core/error.h"
#include "strata/model/multimodal_prompt.h"

namespace strata::test {
namespace {

TEST(MultimodalPrompt, PositionsMatchTransformersGetRopeIndex) {
  const VisionFixture fixture = load_vision_fixture();
  for (const VisionSequence& seq : fixture.sequences) {
    const std::shared_ptr<const MultimodalPrompt> images = seq.prompt(fixture);
    const MultimodalPrompt& prompt = *images;
    const int64_t len = static_cast<int64_t>(seq.tokens.size());
    ASSERT_EQ(seq.positions.size(), static_cast<size_t>(3 * len));
    for (int32_t i = 0; i < len; ++i) {
      const std::array<int32_t, 3> pos = prompt.rope_position(i);
      for (int s = 0; s < 3; ++s) ASSERT_EQ(pos[s], seq.positions[s * len + i]) << "token " << i << " stream " << s;
      EXPECT_EQ(prompt.image_at(i) != nullptr, seq.tokens[i] == kImageTokenId) << i;
    }
  }
}

TEST(MultimodalPrompt, OverlappingOrEmptyImagesAreRefused) {
  EXPECT_THROW(MultimodalPrompt({{.first_token = 4, .grid_h = 2, .grid_w = 2}, {.first_token = 6, .grid_h = 1,
                                                                                 .grid_w = 1}}),
               Error);
  EXPECT_THROW(MultimodalPrompt({{.first_token = 0, .grid_h = 0, .grid_w = 3}}), Error);
  EXPECT_NO_THROW(MultimodalPrompt({{.first_token = 4, .grid_h = 2, .grid_w = 2}, {.first_token = 8, .grid_h = 1,
                                                                                    .grid_w = 1}}));
}

}  // namespace
}  // namespace strata::test
