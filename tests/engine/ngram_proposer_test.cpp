// N-gram drafts: the longest matching suffix wins, the most recent occurrence is used, the
// draft stops at the end of the history and at the asked length.
#include <gtest/gtest.h>

#include "strata/engine/ngram_proposer.h"

namespace strata {
namespace {

TEST(NgramProposer, ProposesWhatFollowedTheMostRecentLongestMatch) {
  const NgramOptions options{.num_speculative_tokens = 3, .prompt_lookup_min = 1, .prompt_lookup_max = 3};
  // Suffix [7, 8, 9] occurred at 0 (then 1, 2, 3); [8, 9] also at 5 (then 4): the 3-gram wins.
  const std::vector<int32_t> tokens = {7, 8, 9, 1, 2, 8, 9, 4, 7, 8, 9};
  EXPECT_EQ(propose_ngram_drafts(tokens, options, 8), (std::vector<int32_t>{1, 2, 8}));
  // Without the 3-gram, [8, 9]'s most recent occurrence (at 5) proposes 4, 7, 8.
  const std::vector<int32_t> shorter = {5, 8, 9, 1, 2, 8, 9, 4, 7, 8, 9};
  EXPECT_EQ(propose_ngram_drafts(shorter, options, 8), (std::vector<int32_t>{4, 7, 8}));
  EXPECT_EQ(propose_ngram_drafts(shorter, options, 2), (std::vector<int32_t>{4, 7}));  // the caller's cap
}

TEST(NgramProposer, StopsAtTheEndOfTheHistoryAndNeedsAMatch) {
  const NgramOptions options{.num_speculative_tokens = 4, .prompt_lookup_min = 2, .prompt_lookup_max = 2};
  EXPECT_EQ(propose_ngram_drafts(std::vector<int32_t>{3, 4, 5, 3, 4}, options, 8), (std::vector<int32_t>{5, 3, 4}));
  EXPECT_TRUE(propose_ngram_drafts(std::vector<int32_t>{1, 2, 3, 4, 5}, options, 8).empty());
  EXPECT_TRUE(propose_ngram_drafts(std::vector<int32_t>{1, 2}, options, 8).empty());
  EXPECT_TRUE(propose_ngram_drafts(std::vector<int32_t>{3, 4, 5, 3, 4}, {.num_speculative_tokens = 0}, 8).empty());
}

}  // namespace
}  // namespace strata
