// SnapshotHostTier with exact contents and eviction order: a stored snapshot restores bit for
// bit into another slot, eviction is GreedyDual-Size (deep prefixes outlive shallow ones of
// the same age, an old entry still ages out), and the prefix cache moves the snapshots its
// device slots give up there, matches them, and drops the host copy when the device has one.
#include "strata/cache/snapshot_host_tier.h"

#include <gtest/gtest.h>

#include "strata/cache/prefix_cache.h"

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

}  // namespace
}  // namespace strata
