// Where hybrid sequences keep SSM snapshots: exact boundaries for prompts, branch points,
// intervals and answers.
#include "strata/cache/snapshot_policy.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

std::vector<int32_t> tokens_of(const std::vector<SnapshotPoint>& points) {
  std::vector<int32_t> out;
  for (const SnapshotPoint& p : points) out.push_back(p.num_tokens);
  return out;
}

std::vector<SnapshotKind> kinds_of(const std::vector<SnapshotPoint>& points) {
  std::vector<SnapshotKind> out;
  for (const SnapshotPoint& p : points) out.push_back(p.kind);
  return out;
}

TEST(SnapshotPolicy, IntervalRoundsToTheNearestBlockAndZeroIsOff) {
  EXPECT_EQ(snapshot_interval_tokens(512, 16), 512);
  EXPECT_EQ(snapshot_interval_tokens(40, 16), 48);  // 2.5 blocks round up
  EXPECT_EQ(snapshot_interval_tokens(39, 16), 32);
  EXPECT_EQ(snapshot_interval_tokens(3, 16), 16);   // at least one block
  EXPECT_EQ(snapshot_interval_tokens(0, 16), 0);
}

TEST(SnapshotPolicy, PromptEndAndTheBoundaryAResendCanReach) {
  const SnapshotPolicy policy{.block_size = 16};
  // 80 tokens fill their last block: a resend can only hit 64, an extension 80.
  EXPECT_EQ(tokens_of(snapshot_points(policy, {.num_prompt_tokens = 80, .end = 80})), (std::vector<int32_t>{64, 80}));
  // 70 tokens: both are 64.
  EXPECT_EQ(tokens_of(snapshot_points(policy, {.num_prompt_tokens = 70, .end = 70})), (std::vector<int32_t>{64}));
  // A chunk that stops short of the end crosses none of them.
  EXPECT_TRUE(snapshot_points(policy, {.num_prompt_tokens = 70, .begin = 0, .end = 40}).empty());
  EXPECT_TRUE(snapshot_points(policy, {.num_prompt_tokens = 10, .end = 10}).empty());
}

TEST(SnapshotPolicy, BranchAndIntervalPointsInsideTheSpan) {
  const SnapshotPolicy policy{.block_size = 16, .interval_tokens = 32};
  const std::vector<SnapshotPoint> points =
      snapshot_points(policy, {.num_prompt_tokens = 100, .branch_tokens = 48, .begin = 20, .end = 100});
  EXPECT_EQ(tokens_of(points), (std::vector<int32_t>{32, 48, 64, 96}));
  EXPECT_EQ(kinds_of(points), (std::vector<SnapshotKind>{SnapshotKind::kInterval, SnapshotKind::kBranch,
                                                         SnapshotKind::kInterval, SnapshotKind::kInterval}));
  // The span's begin is excluded, its end included.
  EXPECT_EQ(tokens_of(snapshot_points(policy, {.num_prompt_tokens = 100, .begin = 32, .end = 64})),
            (std::vector<int32_t>{64}));
}

TEST(SnapshotPolicy, OnlyTheAnswersDeepestBoundary) {
  const SnapshotPolicy policy{.block_size = 16, .interval_tokens = 32};
  // A decode row crossing 48 in the answer of a 30-token prompt (no interval there).
  const std::vector<SnapshotPoint> decode = snapshot_points(policy, {.num_prompt_tokens = 30, .begin = 47, .end = 48});
  EXPECT_EQ(tokens_of(decode), (std::vector<int32_t>{48}));
  EXPECT_EQ(kinds_of(decode), (std::vector<SnapshotKind>{SnapshotKind::kAnswer}));
  // A recompute of prompt and answer at once: 16 ends the prompt, 64 is the answer's deepest.
  EXPECT_EQ(tokens_of(snapshot_points(policy, {.num_prompt_tokens = 30, .end = 70})), (std::vector<int32_t>{16, 64}));
}

}  // namespace
}  // namespace strata
