// SequenceMemory with exact block and slot ids: reserving all or nothing, a fork sharing the
// full blocks and copying the partial one and the state, rolling a slot back to an accepted
// prefix, freeing blocks last first with the slot and its verify buffer, snapshots giving
// their slots up to sequences, and stopping the prefix cache giving every slot back.
#include "strata/cache/sequence_memory.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace strata {
namespace {

const std::vector<SsmLayerShape> kLayers = {{4, 2}};

struct Fixture {
  std::vector<std::pair<int32_t, int32_t>> kv_copies;  // (src, dst) of every copy_kv_block
  SequenceMemory memory{SequenceMemoryParts{
      .blocks = std::make_unique<BlockPool>(6),
      .ssm = std::make_unique<SsmStatePool>(kLayers, 3),
      .verify = std::make_unique<VerifyStateBuffers>(kLayers, 4),
      .block_size = 4,
      .copy_kv_block = [this](int32_t src, int32_t dst) { kv_copies.push_back({src, dst}); }}};
};

float h0(SsmStatePool& pool, int32_t slot) {
  float h[4];
  pool.load_h_state(0, slot, h);
  return h[0];
}

TEST(SequenceMemory, ReserveTakesAllTheBlocksOrNone) {
  Fixture f;
  std::vector<int32_t> table;
  EXPECT_TRUE(f.memory.reserve(table, 9));  // 3 blocks of 4
  EXPECT_EQ(table, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_TRUE(f.memory.reserve(table, 12));  // covered already
  EXPECT_FALSE(f.memory.reserve(table, 30));  // 8 blocks: 5 more, 3 free
  EXPECT_EQ(table.size(), 3u);
  EXPECT_EQ(f.memory.blocks().num_free(), 3);
}

TEST(SequenceMemory, AForkSharesFullBlocksCopiesThePartialOneAndTheState) {
  Fixture f;
  std::vector<int32_t> parent;
  ASSERT_TRUE(f.memory.reserve(parent, 10));  // blocks 0, 1 full; 2 holds 2 tokens
  const int32_t parent_slot = *f.memory.acquire_slot();
  const float state[4] = {7, 7, 7, 7};
  f.memory.ssm()->store_h_state(0, parent_slot, state);
  const std::optional<ForkedMemory> child = f.memory.fork(parent, 10, parent_slot);
  ASSERT_TRUE(child.has_value());
  EXPECT_EQ(child->block_table, (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(f.kv_copies, (std::vector<std::pair<int32_t, int32_t>>{{2, 3}}));
  EXPECT_EQ(f.memory.blocks().ref_count(0), 2);
  EXPECT_NE(child->ssm_slot, parent_slot);
  EXPECT_EQ(h0(*f.memory.ssm(), child->ssm_slot), 7.0f);
  // A block-aligned fork copies nothing.
  const std::optional<ForkedMemory> aligned = f.memory.fork(parent, 8, -1);
  ASSERT_TRUE(aligned.has_value());
  EXPECT_EQ(aligned->block_table, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(aligned->ssm_slot, -1);
  EXPECT_EQ(f.kv_copies.size(), 1u);
}

TEST(SequenceMemory, AForkShortOfASlotTakesNothing) {
  Fixture f;
  std::vector<int32_t> parent;
  ASSERT_TRUE(f.memory.reserve(parent, 6));
  const int32_t slot = *f.memory.acquire_slot();
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(f.memory.acquire_slot().has_value());
  EXPECT_FALSE(f.memory.fork(parent, 6, slot).has_value());
  EXPECT_EQ(f.memory.blocks().num_free(), 4);  // the partial block's copy went back
  EXPECT_EQ(f.memory.blocks().ref_count(0), 1);
}

TEST(SequenceMemory, RollBackKeepsTheAcceptedPrefixAndFreeReleasesEverything) {
  Fixture f;
  std::vector<int32_t> table;
  ASSERT_TRUE(f.memory.reserve(table, 5));
  int32_t slot = *f.memory.acquire_slot();
  VerifyStateBuffer& buffer = f.memory.verify()->for_slot(slot);
  for (int row = 0; row < 3; ++row)
    for (int i = 0; i < 4; ++i) buffer.h_states(0)[row * 4 + i] = float(10 + row);
  buffer.set_num_tokens(3);
  f.memory.roll_back(slot, 3, 2);
  EXPECT_EQ(h0(*f.memory.ssm(), slot), 11.0f);  // the state after the second token
  f.memory.free(table, slot);
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(slot, -1);
  EXPECT_EQ(f.memory.blocks().free_queue(), (std::vector<int32_t>{2, 3, 4, 5, 1, 0}));
  EXPECT_EQ(f.memory.ssm()->num_free(), 3);
  EXPECT_EQ(f.memory.verify()->num_in_use(), 0);
}

TEST(SequenceMemory, SnapshotsGiveTheirSlotsToSequencesAndStoppingReturnsThem) {
  Fixture f;
  f.memory.start_prefix_cache(/*num_snapshot_slots=*/2);
  PrefixCache& cache = *f.memory.prefix_cache();
  for (uint64_t hash : {5u, 6u}) cache.commit_snapshot(hash, *cache.reserve_snapshot(hash), 16);
  const int32_t a = *f.memory.acquire_slot();  // the free one
  const int32_t b = *f.memory.acquire_slot();  // snapshot 5's, the least recently used
  EXPECT_NE(a, b);
  EXPECT_FALSE(cache.has_snapshot(5));
  EXPECT_TRUE(cache.has_snapshot(6));
  f.memory.free_slot(a);
  f.memory.free_slot(b);
  f.memory.stop_prefix_cache();
  EXPECT_EQ(f.memory.ssm()->num_free(), 3);
}

}  // namespace
}  // namespace strata
