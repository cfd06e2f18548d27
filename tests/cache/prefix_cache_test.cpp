// PrefixCache with exact block ids: hits share blocks, misses after the first differing
// block, the last prompt token is never matched, freed blocks are evicted LRU-first.
#include <gtest/gtest.h>

#include <numeric>

#include "strata/cache/prefix_cache.h"

namespace strata {
namespace {

std::vector<int32_t> tokens(int32_t n, int32_t offset = 0) {
  std::vector<int32_t> t(n);
  std::iota(t.begin(), t.end(), offset);
  return t;
}

// Allocates blocks for `n` tokens and registers the full ones, as the engine does.
std::vector<int32_t> fill(BlockPool& pool, PrefixCache& cache, const std::vector<int32_t>& toks,
                          uint64_t key = 0) {
  std::vector<int32_t> blocks;
  EXPECT_TRUE(pool.allocate_n(static_cast<int32_t>((toks.size() + 3) / 4), blocks));
  std::vector<uint64_t> hashes;
  cache.extend_block_hashes(toks, key, hashes);
  cache.insert({.hashes = hashes,
                .block_ids = std::span<const int32_t>(blocks).first(hashes.size()),
                .token_ids = std::span<const int32_t>(toks).first(hashes.size() * 4)});
  return blocks;
}

TEST(PrefixCache, HitSharesBlocksAndLeavesTheLastTokenToCompute) {
  BlockPool pool(16);
  PrefixCache cache(pool, 4, nullptr, 0);
  const auto first = fill(pool, cache, tokens(12));
  EXPECT_EQ(first, (std::vector<int32_t>{0, 1, 2}));
  std::vector<uint64_t> hashes;
  cache.extend_block_hashes(tokens(12), 0, hashes);
  // Same 12 tokens: only 2 blocks, so token 12 (the last) is computed again.
  PrefixMatch m = cache.match(hashes, 12);
  EXPECT_EQ(m.blocks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(m.num_tokens, 8);
  EXPECT_EQ(pool.ref_count(0), 2);
  // A longer prompt with the same prefix gets all three.
  std::vector<uint64_t> longer;
  cache.extend_block_hashes(tokens(14), 0, longer);
  m = cache.match(longer, 14);
  EXPECT_EQ(m.blocks, (std::vector<int32_t>{0, 1, 2}));
}

TEST(PrefixCache, ShortPromptsAndOtherKeysMiss) {
  BlockPool pool(16);
  PrefixCache cache(pool, 4, nullptr, 0);
  fill(pool, cache, tokens(8));
  std::vector<uint64_t> hashes;
  cache.extend_block_hashes(tokens(3), 0, hashes);
  EXPECT_TRUE(hashes.empty());
  EXPECT_EQ(cache.match(hashes, 3).num_tokens, 0);
  std::vector<uint64_t> salted;
  cache.extend_block_hashes(tokens(8), /*extra_key=*/42, salted);
  EXPECT_EQ(cache.match(salted, 9).num_tokens, 0);
  std::vector<uint64_t> diverged;  // differs inside the second block
  auto t = tokens(8);
  t[5] = 99;
  cache.extend_block_hashes(t, 0, diverged);
  EXPECT_EQ(cache.match(diverged, 9).blocks, (std::vector<int32_t>{0}));
}

TEST(PrefixCache, FreedBlocksStayCachedUntilReusedInLruOrder) {
  BlockPool pool(4);
  PrefixCache cache(pool, 4, nullptr, 0);
  const auto a = fill(pool, cache, tokens(8));        // blocks 0, 1
  const auto b = fill(pool, cache, tokens(8, 100));   // blocks 2, 3
  for (auto it = a.rbegin(); it != a.rend(); ++it) pool.release(*it);
  for (auto it = b.rbegin(); it != b.rend(); ++it) pool.release(*it);
  EXPECT_EQ(pool.free_queue(), (std::vector<int32_t>{1, 0, 3, 2}));
  EXPECT_EQ(cache.num_cached_blocks(), 4);
  // Reusing one block evicts the least recently freed: block 1 (a's tail).
  EXPECT_EQ(*pool.allocate(), 1);
  EXPECT_EQ(cache.num_cached_blocks(), 3);
  std::vector<uint64_t> ha;
  cache.extend_block_hashes(tokens(9), 0, ha);
  const PrefixMatch m = cache.match(ha, 9);
  EXPECT_EQ(m.blocks, (std::vector<int32_t>{0}));  // a's head is still there
  EXPECT_EQ(pool.free_queue(), (std::vector<int32_t>{3, 2}));  // and no longer free
}

TEST(PrefixCache, SnapshotsBoundTheMatchAndEvictLru) {
  BlockPool pool(16);
  SsmStatePool ssm({{8, 2}}, 4);
  PrefixCache cache(pool, 4, &ssm, 2);
  fill(pool, cache, tokens(12));
  std::vector<uint64_t> h;
  cache.extend_block_hashes(tokens(16), 0, h);
  EXPECT_EQ(cache.match(h, 16).num_tokens, 0);  // blocks cached, but no snapshot yet
  const int32_t s1 = *cache.reserve_snapshot(h[0]);
  cache.commit_snapshot(h[0], s1, 16);
  PrefixMatch m = cache.match(h, 16);
  EXPECT_EQ(m.num_tokens, 4);
  EXPECT_EQ(m.ssm_snapshot_slot, s1);
  const int32_t s2 = *cache.reserve_snapshot(h[1]);
  cache.commit_snapshot(h[1], s2, 16);
  EXPECT_EQ(cache.match(h, 16).num_tokens, 8);
  // A third snapshot evicts the least recently used one (h[0]: h[1] was matched last).
  const int32_t s3 = *cache.reserve_snapshot(h[2]);
  EXPECT_EQ(s3, s1);
  cache.commit_snapshot(h[2], s3, 16);
  EXPECT_FALSE(cache.has_snapshot(h[0]));
  EXPECT_EQ(cache.match(h, 16).num_tokens, 12);
}

// Three cached blocks of 4 tokens (12 tokens), a 4-slot SSM pool, 2 snapshot slots; h: the
// hashes of a 16-token prompt that starts with those 12.
struct CachedChain {
  BlockPool pool{16};
  SsmStatePool ssm{{{8, 2}}, 4};
  PrefixCache cache{pool, 4, &ssm, 2};
  std::vector<uint64_t> h;
  CachedChain() {
    fill(pool, cache, tokens(12));
    cache.extend_block_hashes(tokens(16), 0, h);
  }
};

// The blocks found before the cut to the deepest snapshot tell where a prompt branched off.
TEST(PrefixCache, MatchReportsTheBlockDepthBeyondTheDeepestSnapshot) {
  CachedChain c;
  c.cache.commit_snapshot(c.h[0], *c.cache.reserve_snapshot(c.h[0]), 16);
  const PrefixMatch m = c.cache.match(c.h, 16);
  EXPECT_EQ(m.num_tokens, 4);
  EXPECT_EQ(m.num_block_tokens, 12);
}

// An answer's snapshot moves forward in its own slot until a match uses it.
TEST(PrefixCache, UnusedSnapshotGivesItsSlotBackForTheNextBoundary) {
  CachedChain c;
  PrefixCache& cache = c.cache;
  const std::vector<uint64_t>& h = c.h;
  const int32_t s1 = *cache.reserve_snapshot(h[0]);
  cache.commit_snapshot(h[0], s1, 16);
  EXPECT_EQ(cache.take_unused_snapshot(h[0]), s1);
  EXPECT_FALSE(cache.has_snapshot(h[0]));
  EXPECT_TRUE(cache.commit_snapshot(h[1], s1, 16));
  EXPECT_EQ(cache.match(h, 16).ssm_snapshot_slot, s1);  // used: it stays
  EXPECT_EQ(cache.take_unused_snapshot(h[1]), std::nullopt);
  EXPECT_EQ(cache.num_snapshots_taken(), 2);
  EXPECT_EQ(cache.snapshot_bytes(), c.ssm.slot_bytes());
}

// A snapshot a match used outlives older and newer ones nobody used.
TEST(PrefixCache, EvictionGivesUpUnusedSnapshotsFirst) {
  CachedChain c;
  PrefixCache& cache = c.cache;
  const int32_t used = *cache.reserve_snapshot(c.h[0]);
  cache.commit_snapshot(c.h[0], used, 16);
  EXPECT_EQ(cache.match(c.h, 5).ssm_snapshot_slot, used);  // a 5-token prompt: only h[0] can match
  const int32_t unused = *cache.reserve_snapshot(c.h[1]);
  cache.commit_snapshot(c.h[1], unused, 16);
  // h[0] is the least recently used, but h[1] goes.
  EXPECT_EQ(cache.reserve_snapshot(c.h[2]), unused);
  EXPECT_TRUE(cache.has_snapshot(c.h[0]));
  EXPECT_FALSE(cache.has_snapshot(c.h[1]));
  cache.cancel_snapshot(unused);
  // With every remaining snapshot used, the least recently used goes.
  EXPECT_TRUE(cache.release_snapshot_slot());
  EXPECT_EQ(cache.num_snapshots(), 0);
}

// Two sequences may fill the same boundary when its hash was unknown at launch: the second
// commit gives its slot back to the SSM pool.
TEST(PrefixCache, SecondCommitOfAHashFreesItsSlot) {
  BlockPool pool(16);
  SsmStatePool ssm({{8, 2}}, 4);
  PrefixCache cache(pool, 4, &ssm, 3);
  const int32_t s1 = *cache.reserve_snapshot_slot();
  const int32_t s2 = *cache.reserve_snapshot_slot();
  EXPECT_TRUE(cache.commit_snapshot(7, s1, 16));
  EXPECT_FALSE(cache.commit_snapshot(7, s2, 16));
  EXPECT_EQ(ssm.num_free(), 3);
  EXPECT_EQ(cache.num_snapshots(), 1);
}

TEST(PrefixCache, DestroyingItFreesReservedAndCommittedSlots) {
  BlockPool pool(16);
  SsmStatePool ssm({{8, 2}}, 4);
  {
    PrefixCache cache(pool, 4, &ssm, 3);
    cache.commit_snapshot(1, *cache.reserve_snapshot(1), 16);
    ASSERT_TRUE(cache.reserve_snapshot_slot().has_value());
    EXPECT_EQ(ssm.num_free(), 2);
  }
  EXPECT_EQ(ssm.num_free(), 4);
}

}  // namespace
}  // namespace strata
