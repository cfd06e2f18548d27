#include "strata/server/replica_choice.h"

#include <gtest/gtest.h>

#include <vector>

#include "strata/server/replica_prefix_table.h"

namespace strata::server {
namespace {

int32_t pick(const std::vector<ReplicaLoad>& loads) { return pick_replica(loads); }

TEST(ReplicaChoice, WithoutPrefixesTheLeastBusyTakesItTiesToTheLowestIndex) {
  EXPECT_EQ(pick({{.num_requests = 0}}), 0);
  EXPECT_EQ(pick({{.num_requests = 3}, {.num_requests = 1}, {.num_requests = 2}}), 1);
  EXPECT_EQ(pick({{.num_requests = 2}, {.num_requests = 1}, {.num_requests = 1}}), 1);
  EXPECT_EQ(pick({{.num_requests = 0}, {.num_requests = 0}}), 0);
  EXPECT_EQ(pick({{.num_requests = 5}, {.num_requests = 5}, {.num_requests = 4}, {.num_requests = 4}}), 2);
}

TEST(ReplicaChoice, TheLongestCachedPrefixWinsOverAShorterQueue) {
  EXPECT_EQ(pick({{.num_requests = 0}, {.num_requests = 2, .num_prefix_blocks = 1}}), 1);
  EXPECT_EQ(pick({{.num_requests = 1, .num_prefix_blocks = 3}, {.num_requests = 0, .num_prefix_blocks = 4},
                  {.num_requests = 0, .num_prefix_blocks = 2}}),
            1);
  // Equal prefixes: the less busy of them, then the lower index.
  EXPECT_EQ(pick({{.num_requests = 0}, {.num_requests = 3, .num_prefix_blocks = 2},
                  {.num_requests = 1, .num_prefix_blocks = 2}}),
            2);
  EXPECT_EQ(pick({{.num_requests = 1, .num_prefix_blocks = 2}, {.num_requests = 1, .num_prefix_blocks = 2}}), 0);
}

TEST(ReplicaChoice, AffinityGivesWayPastTheImbalanceLimit) {
  // Four more than the least busy still keeps affinity; five more goes to the least busy.
  EXPECT_EQ(pick({{.num_requests = 1}, {.num_requests = 5, .num_prefix_blocks = 8}}), 1);
  EXPECT_EQ(pick({{.num_requests = 1}, {.num_requests = 6, .num_prefix_blocks = 8}}), 0);
  EXPECT_EQ(pick_replica(std::vector<ReplicaLoad>{{.num_requests = 0}, {.num_requests = 1, .num_prefix_blocks = 8}},
                         /*max_affinity_imbalance=*/0),
            0);
}

TEST(ReplicaPrefixTable, MatchesFromTheStartOfTheChainOnly) {
  ReplicaPrefixTable table(2, 100);
  table.remember(1, std::vector<uint64_t>{10, 11, 12});
  EXPECT_EQ(table.num_matching_blocks(1, std::vector<uint64_t>{10, 11, 12, 13}), 3);
  EXPECT_EQ(table.num_matching_blocks(1, std::vector<uint64_t>{10, 11, 99}), 2);
  EXPECT_EQ(table.num_matching_blocks(1, std::vector<uint64_t>{99, 11, 12}), 0);  // a miss ends the run
  EXPECT_EQ(table.num_matching_blocks(0, std::vector<uint64_t>{10}), 0);
}

TEST(ReplicaPrefixTable, ForgetsTheLeastRecentlySentChainTailFirst) {
  ReplicaPrefixTable table(1, 4);
  table.remember(0, std::vector<uint64_t>{1, 2, 3});
  table.remember(0, std::vector<uint64_t>{7, 8});  // one over: the first chain's tail (3) goes
  EXPECT_EQ(table.num_blocks(0), 4);
  EXPECT_EQ(table.num_matching_blocks(0, std::vector<uint64_t>{1, 2, 3}), 2);
  EXPECT_EQ(table.num_matching_blocks(0, std::vector<uint64_t>{7, 8}), 2);
  table.remember(0, std::vector<uint64_t>{1});  // refreshed: 2 is now the oldest
  table.remember(0, std::vector<uint64_t>{9});
  EXPECT_EQ(table.num_matching_blocks(0, std::vector<uint64_t>{1, 2}), 1);
  EXPECT_EQ(table.num_matching_blocks(0, std::vector<uint64_t>{7, 8}), 2);
}

}  // namespace
}  // namespace strata::server
