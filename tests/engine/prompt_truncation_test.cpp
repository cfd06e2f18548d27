// truncate_prompt_tokens as vLLM reads it: -1 is the model's limit, k >= 1 is k, anything else
// (0, below -1, above max_model_len) an Error naming the value; token ids keep their last k.
#include "strata/engine/prompt_truncation.h"

#include <gtest/gtest.h>

#include "strata/core/error.h"

namespace strata {
namespace {

TEST(PromptTruncation, ResolvesTruncatePromptTokens) {
  EXPECT_EQ(truncation_max_tokens(std::nullopt, 512), 0);
  EXPECT_EQ(truncation_max_tokens(-1, 512), 512);
  EXPECT_EQ(truncation_max_tokens(1, 512), 1);
  EXPECT_EQ(truncation_max_tokens(512, 512), 512);
  for (int64_t bad : {0L, -2L, 513L}) {
    try {
      truncation_max_tokens(bad, 512);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
    }
  }
}

TEST(PromptTruncation, TokenIdsKeepTheirLastTokens) {
  const std::vector<int32_t> ids = {11, 12, 13, 14, 15};
  EXPECT_EQ(keep_last_tokens(ids, 3), (std::vector<int32_t>{13, 14, 15}));
  EXPECT_EQ(keep_last_tokens(ids, 5), ids);
  EXPECT_EQ(keep_last_tokens(ids, 9), ids);
  EXPECT_EQ(keep_last_tokens(ids, 0), ids);
}

}  // namespace
}  // namespace strata
