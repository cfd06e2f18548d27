// SnapshotHostTier with exact contents and eviction order: a stored snapshot restores bit for
// bit into another slot, eviction is GreedyDual-Size (deep prefixes outlive shallow ones of
// the same age, an old entry still ages out), and the prefix cache moves the snapshots its
// device slots give up there, matches them, and drops the host copy when the device has one.
// Under tensor parallelism every copy is told (slot, row) and another rank's SequenceMemory
// repeating them holds the same states in its own pool.
#include "strata/cache/snapshot_host_tier.h"

#include <gtest/gtest.h>

#include "strata/cache/prefix_cache.h"
#include "strata/cache/sequence_memory.h"

namespace strata {
namespace {

const std::vector<SsmLayerShape> kLayers = {{4, 2}};  // 24 bytes a slot

void set_state(SsmStatePool& pool, int32_t slot, float value) {
  const float h[4] = {value, value + 1, value + 2, value + 3}, conv[2] = {-value, value};
  pool.store_h_state(0, slot, h);
  pool.store_conv_state(0, slot, conv);
}

TEST(SnapshotHostTier, ARestoredSnapshotIsTheStoredStateBitForBit) {
  SsmStatePool pool(kLayers, 3);
  const int32_t a = *pool.allocate(), b = *pool.allocate();
  set_state(pool, a, 7.25f);
  SnapshotHostTier tier(pool, 2 * pool.slot_bytes(), nullptr);
  EXPECT_EQ(tier.capacity(), 2);
  tier.store(11, a, 32);
  set_state(pool, a, 0);
  tier.restore(11, b);
  float h[4], conv[2];
  pool.load_h_state(0, b, h);
  pool.load_conv_state(0, b, conv);
  EXPECT_EQ(h[3], 10.25f);
  EXPECT_EQ(conv[0], -7.25f);
  EXPECT_EQ(tier.counters().num_stored, 1);
  EXPECT_EQ(tier.counters().num_restored, 1);
  EXPECT_EQ(tier.counters().bytes_restored, pool.slot_bytes());
  EXPECT_EQ(tier.bytes(), pool.slot_bytes());
}

TEST(SnapshotHostTier, EvictionWeighsTokensSavedAndAge) {
  SsmStatePool pool(kLayers, 2);
  const int32_t slot = *pool.allocate();
  SnapshotHostTier tier(pool, 2 * pool.slot_bytes(), nullptr);
  tier.store(1, slot, 64);
  tier.store(2, slot, 16);
  tier.store(3, slot, 32);  // full: the shallowest (2) goes, though it is not the oldest
  EXPECT_TRUE(tier.contains(1));
  EXPECT_FALSE(tier.contains(2));
  EXPECT_TRUE(tier.contains(3));
  tier.store(4, slot, 8);  // the clock is 2's value now: 3 (16 + 32) is below 1 (64)
  EXPECT_TRUE(tier.contains(1));
  EXPECT_FALSE(tier.contains(3));
  tier.store(5, slot, 16);  // clock 48: 4 (48 + 8) is below 1 (64)
  EXPECT_FALSE(tier.contains(4));
  tier.store(6, slot, 16);  // clock 56: 5 (56 + 16) is above the deep but stale 1, which goes at last
  EXPECT_FALSE(tier.contains(1));
  EXPECT_TRUE(tier.contains(5) && tier.contains(6));
  EXPECT_EQ(tier.counters().num_evicted, 4);
}

TEST(SnapshotHostTier, ThePrefixCacheMovesEvictedSnapshotsThereAndMatchesThem) {
  BlockPool blocks(8);
  SsmStatePool pool(kLayers, 4);
  PrefixCache cache(blocks, 4, &pool, 1, std::make_unique<SnapshotHostTier>(pool, 4 * pool.slot_bytes(), nullptr));
  std::vector<int32_t> table;
  ASSERT_TRUE(blocks.allocate_n(3, table));
  std::vector<uint64_t> h;
  const std::vector<int32_t> tokens(13, 5);
  cache.extend_block_hashes(tokens, 0, h);
  cache.insert({.hashes = h, .block_ids = table, .token_ids = std::span<const int32_t>(tokens).first(12)});
  const int32_t s1 = *cache.reserve_snapshot(h[1]);
  set_state(pool, s1, 3.5f);
  cache.commit_snapshot(h[1], s1, 8);
  const int32_t s2 = *cache.reserve_snapshot(h[0]);  // the one device slot: h[1] moves to the host
  EXPECT_EQ(s2, s1);
  cache.commit_snapshot(h[0], s2, 4);
  EXPECT_TRUE(cache.has_snapshot(h[1]));
  EXPECT_EQ(cache.host_tier()->num_snapshots(), 1);
  const PrefixMatch m = cache.match(h, 13);
  EXPECT_EQ(m.num_tokens, 8);
  EXPECT_EQ(m.ssm_snapshot_slot, -1);
  EXPECT_EQ(m.host_snapshot, h[1]);
  const int32_t dst = *pool.allocate();
  cache.restore_snapshot(m, dst);
  float h0[4];
  pool.load_h_state(0, dst, h0);
  EXPECT_EQ(h0[0], 3.5f);
  for (int32_t block : m.blocks) blocks.release(block);
  const int32_t s3 = *cache.reserve_snapshot(h[1]);  // the device keeps h[1] again: h[0] to the host
  cache.commit_snapshot(h[1], s3, 8);
  EXPECT_TRUE(cache.host_tier()->contains(h[0]));
  EXPECT_FALSE(cache.host_tier()->contains(h[1]));
  EXPECT_EQ(cache.match(h, 13).ssm_snapshot_slot, s3);
  pool.free(dst);
}

// Rank 0's tier tells its rows once and each copy with its slot and row (a full tier reuses the
// evicted entry's row); a second pool repeating them through SequenceMemory ends with the
// states rank 0 restored.
TEST(SnapshotHostTier, CopiesAreToldSoAnotherRankRepeatsThem) {
  std::vector<int32_t> told_rows;
  std::vector<SnapshotCopy> copies;
  SequenceMemory rank0{SequenceMemoryParts{
      .blocks = std::make_unique<BlockPool>(4), .ssm = std::make_unique<SsmStatePool>(kLayers, 3),
      .verify = std::make_unique<VerifyStateBuffers>(kLayers, 2), .block_size = 4,
      .memory_listener = {.snapshot_rows = [&](int32_t rows) { told_rows.push_back(rows); },
                          .snapshot_copy = [&](const SnapshotCopy& c) { copies.push_back(c); }}}};
  SequenceMemory rank1{SequenceMemoryParts{.blocks = std::make_unique<BlockPool>(4),
                                           .ssm = std::make_unique<SsmStatePool>(kLayers, 3),
                                           .verify = std::make_unique<VerifyStateBuffers>(kLayers, 2),
                                           .block_size = 4}};
  SsmStatePool& pool = *rank0.ssm();
  rank0.start_prefix_cache(1, 2 * pool.slot_bytes());
  EXPECT_EQ(told_rows, (std::vector<int32_t>{2}));
  rank1.start_snapshot_rows(told_rows[0]);
  SnapshotHostTier tier(pool, 2 * pool.slot_bytes(), nullptr,
                        [&](const SnapshotCopy& c) { copies.push_back(c); });
  const int32_t a = *pool.allocate(), b = *pool.allocate();
  for (int32_t s = 0; s < 2; ++s) ASSERT_EQ(*rank1.ssm()->allocate(), s == 0 ? a : b);
  for (float v : {1.5f, 2.5f, 3.5f}) {  // three states into two rows: the shallowest (2.5, 16 tokens) goes
    set_state(pool, a, v);
    set_state(*rank1.ssm(), a, 10 * v);
    tier.store(static_cast<uint64_t>(v * 2), a, v == 2.5f ? 16 : 64);
    rank1.repeat_snapshot_copy(copies.back());
  }
  tier.restore(3, b);  // the state 1.5
  rank1.repeat_snapshot_copy(copies.back());
  ASSERT_EQ(copies.size(), 4u);
  const int32_t expected[4][3] = {{1, a, 0}, {1, a, 1}, {1, a, 1}, {0, b, 0}};  // out, slot, row
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ((std::vector<int32_t>{copies[i].out, copies[i].slot, copies[i].row}),
              (std::vector<int32_t>(expected[i], expected[i] + 3))) << "copy " << i;
  float h[4];
  rank1.ssm()->load_h_state(0, b, h);
  EXPECT_EQ(h[0], 15.0f);  // rank 1's own value of the state rank 0 restored
  pool.load_h_state(0, b, h);
  EXPECT_EQ(h[0], 1.5f);
}

}  // namespace
}  // namespace strata
