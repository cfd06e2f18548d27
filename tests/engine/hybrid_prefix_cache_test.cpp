// Prefix-cache hits on hybrid models wherever prompts share a prefix, not only where an
// earlier prompt ended: the branch point a second sharer creates (also inside a prefill
// chunk), the end of a finished answer (the next chat turn, also with async scheduling) and
// interval snapshots. Every hit is checked against a cold run: same tokens,
// log-probabilities within 1e-4.
#include "engine/prefix_cache_test_support.h"

namespace strata {
namespace {

using test::cache_prompt;
using test::CachedRunResult;
using test::extend_prompt;
using test::greedy_request;
using test::wait_result;

class HybridPrefixCache : public test::PrefixCacheEngineTest {
 protected:
  // Runs the requests one after another on one caching engine and returns their results.
  std::vector<CachedRunResult> run_in_turn(test::CheckedEngine& engine, const std::vector<GenerationRequest>& requests) {
    std::vector<CachedRunResult> results;
    for (const GenerationRequest& r : requests) results.push_back(wait_result(*engine.submit(r)));
    return results;
  }
};

// A and B share 40 tokens and then differ. A kept its state only at its own end (64, 80),
// so B finds the shared blocks but no state there (0 cached) and keeps its state at the
// divergence, block boundary 32: C, a third sharer, starts from there.
TEST_P(HybridPrefixCache, SecondSharerKeepsTheBranchPointForTheThird) {
  const std::vector<int32_t> shared = cache_prompt(40, 1);
  const std::vector<int32_t> a = extend_prompt(shared, 40, 2), b = extend_prompt(shared, 40, 3),
                             c = extend_prompt(shared, 30, 4);
  auto warm = engine(true);
  const std::vector<CachedRunResult> got = run_in_turn(*warm, {greedy_request(a), greedy_request(b), greedy_request(c)});
  EXPECT_EQ(got[1].num_cached_tokens, 0);
  EXPECT_EQ(got[2].num_cached_tokens, 32);
  expect_same(got[1], cold(b));
  expect_same(got[2], cold(c));
  // A: 64 and 80 (its prompt's end); B: 32 (the branch), 64 and 80; C: 64.
  EXPECT_EQ(warm->stats().ssm_snapshots_taken_total, 6u);
}

// The same with chunks of 20 tokens: B's branch point 32 falls inside its chunk [20, 40).
TEST_P(HybridPrefixCache, BranchPointInsideAPrefillChunk) {
  const std::vector<int32_t> shared = cache_prompt(40, 5);
  const std::vector<int32_t> a = extend_prompt(shared, 40, 6), b = extend_prompt(shared, 40, 7),
                             c = extend_prompt(shared, 30, 8);
  auto warm = engine(true, 128, /*budget=*/20);
  const std::vector<CachedRunResult> got = run_in_turn(*warm, {greedy_request(a), greedy_request(b), greedy_request(c)});
  EXPECT_EQ(got[1].num_cached_tokens, 0);
  EXPECT_EQ(got[2].num_cached_tokens, 32);
  expect_same(got[2], cold(c));
}

// Turn 1: 30 prompt tokens, 24 answer tokens, of which 23 were fed back (53 computed). The
// answer's snapshot moved from boundary 32 to 48, so turn 2 (turn 1, its answer and 10 new
// tokens) starts at 48, not at 16 where turn 1's prompt ended.
TEST_P(HybridPrefixCache, NextChatTurnStartsAtTheEndOfTheAnswer) {
  const std::vector<int32_t> turn1 = cache_prompt(30, 9);
  auto warm = engine(true);
  const CachedRunResult answer = wait_result(*warm->submit(greedy_request(turn1, 24)));
  ASSERT_EQ(answer.tokens.size(), 24u);
  // 16 (turn 1's prompt end), 32, then 48 in the slot 32 gave back.
  EXPECT_EQ(warm->stats().ssm_snapshots_taken_total, 3u);
  EXPECT_EQ(warm->stats().ssm_snapshots, 2);
  // The same turn again starts at 16; its answer keeps 32 (moved away before) until it
  // reaches 48, kept already, which then serves as its end: one more taken, two held.
  const CachedRunResult again = wait_result(*warm->submit(greedy_request(turn1, 24)));
  EXPECT_EQ(again.num_cached_tokens, 16);
  EXPECT_EQ(again.tokens, answer.tokens);
  EXPECT_EQ(warm->stats().ssm_snapshots_taken_total, 4u);
  EXPECT_EQ(warm->stats().ssm_snapshots, 2);
  std::vector<int32_t> turn2 = turn1;
  turn2.insert(turn2.end(), answer.tokens.begin(), answer.tokens.end());
  turn2 = extend_prompt(turn2, 10, 10);
  const CachedRunResult hit = wait_result(*warm->submit(greedy_request(turn2)));
  EXPECT_EQ(hit.num_cached_tokens, 48);
  expect_same(hit, cold(turn2));
}

// With async scheduling a decode row's token is still on the device when the row that ends a
// block is launched: the snapshot is committed once the token is back, at the same depth.
TEST_P(HybridPrefixCache, NextChatTurnWithAsyncScheduling) {
  const std::vector<int32_t> turn1 = cache_prompt(30, 13);
  auto warm = engine(EngineOptions{.async_scheduling = true});
  ASSERT_TRUE(warm->async_scheduling());
  const CachedRunResult answer = wait_result(*warm->submit(greedy_request(turn1, 24)));
  ASSERT_EQ(answer.tokens.size(), 24u);
  EXPECT_EQ(warm->stats().ssm_snapshots_taken_total, 3u);
  std::vector<int32_t> turn2 = turn1;
  turn2.insert(turn2.end(), answer.tokens.begin(), answer.tokens.end());
  turn2 = extend_prompt(turn2, 10, 14);
  const CachedRunResult hit = wait_result(*warm->submit(greedy_request(turn2)));
  EXPECT_EQ(hit.num_cached_tokens, 48);
  expect_same(hit, cold(turn2));
}

// With --ssm-snapshot-interval 32, a 100-token prompt keeps its state at 32, 64 and 96, so
// a prompt sharing its first 70 tokens starts at 64, its divergence's block boundary, on the
// second request already; with the interval off it finds none.
TEST_P(HybridPrefixCache, IntervalSnapshotsInALongPrompt) {
  const std::vector<int32_t> first = cache_prompt(100, 11);
  const std::vector<int32_t> second = extend_prompt({first.begin(), first.begin() + 70}, 20, 12);
  for (const int32_t interval : {32, 0}) {
    auto warm = engine(EngineOptions{.ssm_snapshot_interval = interval});
    const std::vector<CachedRunResult> got = run_in_turn(*warm, {greedy_request(first), greedy_request(second)});
    EXPECT_EQ(got[1].num_cached_tokens, interval == 32 ? 64 : 0) << "interval " << interval;
    if (interval == 32) expect_same(got[1], cold(second));
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HybridPrefixCache, ::testing::Values("qwen3_next", "mamba2", "nemotron_h",
                                                                                  "qwen3_5", "qwen4_exp"));

}  // namespace
}  // namespace strata
