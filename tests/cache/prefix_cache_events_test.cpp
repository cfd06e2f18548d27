// The prefix cache's event sink, for a scripted sequence of stores, evictions and a reset:
// the events, their order and their exact block hashes, parents and token ids.
#include <gtest/gtest.h>

#include <numeric>
#include <optional>

#include "strata/cache/prefix_cache.h"

namespace strata {
namespace {

struct RecordingSink final : KvEventSink {
  std::vector<KvCacheEvent> events;
  void record(KvCacheEvent event) override { events.push_back(std::move(event)); }
};

std::vector<int32_t> tokens(int32_t n, int32_t offset = 0) {
  std::vector<int32_t> t(n);
  std::iota(t.begin(), t.end(), offset);
  return t;
}

const BlockStored& stored(const KvCacheEvent& e) { return std::get<BlockStored>(e); }
const BlockRemoved& removed(const KvCacheEvent& e) { return std::get<BlockRemoved>(e); }

TEST(PrefixCacheEvents, StoredRunsEvictionsInLruOrderAndClearedAtTheEnd) {
  BlockPool pool(4);
  RecordingSink sink;
  std::vector<uint64_t> a_hashes, b_hashes;
  {
    PrefixCache cache(pool, 2, nullptr, 0);
    cache.set_event_sink(&sink);
    // Sequence a: 6 tokens on blocks 0-2, registered as two steps complete them (2, then 1).
    const std::vector<int32_t> a = tokens(6, 100);
    std::vector<int32_t> a_blocks;
    ASSERT_TRUE(pool.allocate_n(3, a_blocks));
    cache.extend_block_hashes(a, 0, a_hashes);
    cache.insert({.hashes = std::span(a_hashes).first(2), .block_ids = std::span(a_blocks).first(2),
                  .token_ids = std::span(a).first(4)});
    cache.insert({.hashes = std::span(a_hashes).subspan(2), .block_ids = std::span(a_blocks).subspan(2),
                  .token_ids = std::span(a).subspan(4), .parent_hash = a_hashes[1]});
    ASSERT_EQ(sink.events.size(), 2u);
    EXPECT_EQ(stored(sink.events[0]).block_hashes, (std::vector<uint64_t>{a_hashes[0], a_hashes[1]}));
    EXPECT_EQ(stored(sink.events[0]).parent_block_hash, std::nullopt);
    EXPECT_EQ(stored(sink.events[0]).token_ids, (std::vector<int32_t>{100, 101, 102, 103}));
    EXPECT_EQ(stored(sink.events[0]).block_size, 2);
    EXPECT_EQ(stored(sink.events[1]).block_hashes, (std::vector<uint64_t>{a_hashes[2]}));
    EXPECT_EQ(stored(sink.events[1]).parent_block_hash, a_hashes[1]);
    EXPECT_EQ(stored(sink.events[1]).token_ids, (std::vector<int32_t>{104, 105}));

    // Sequence b computed a's first block again on its own block: that hash keeps block 0 (no
    // event); its second block is new, stored with a's first hash as parent.
    std::vector<int32_t> b = tokens(4, 100);
    b[3] = 7;
    std::vector<int32_t> b_blocks;
    ASSERT_TRUE(pool.allocate_n(1, b_blocks));
    b_blocks.insert(b_blocks.begin(), a_blocks[0]);
    cache.extend_block_hashes(b, 0, b_hashes);
    EXPECT_EQ(b_hashes[0], a_hashes[0]);
    cache.insert({.hashes = b_hashes, .block_ids = b_blocks, .token_ids = b});
    ASSERT_EQ(sink.events.size(), 3u);
    EXPECT_EQ(stored(sink.events[2]).block_hashes, (std::vector<uint64_t>{b_hashes[1]}));
    EXPECT_EQ(stored(sink.events[2]).parent_block_hash, a_hashes[0]);
    EXPECT_EQ(stored(sink.events[2]).token_ids, (std::vector<int32_t>{102, 7}));

    // a ends tail first, as SequenceMemory::free does: blocks 2 then 1 join the empty free queue,
    // so the next two allocations evict them in that order.
    for (int32_t blk : {a_blocks[2], a_blocks[1]}) pool.release(blk);
    ASSERT_TRUE(pool.allocate().has_value());
    ASSERT_TRUE(pool.allocate().has_value());
    ASSERT_EQ(sink.events.size(), 5u);
    EXPECT_EQ(removed(sink.events[3]).block_hashes, (std::vector<uint64_t>{a_hashes[2]}));
    EXPECT_EQ(removed(sink.events[4]).block_hashes, (std::vector<uint64_t>{a_hashes[1]}));
    EXPECT_EQ(cache.num_cached_blocks(), 2);  // a_hashes[0] and b_hashes[1] remain
  }
  ASSERT_EQ(sink.events.size(), 6u);
  EXPECT_TRUE(std::holds_alternative<AllBlocksCleared>(sink.events[5]));
}

TEST(PrefixCacheEvents, AGapInTheRunSplitsItAndNothingIsReportedWithoutASink) {
  BlockPool pool(8);
  RecordingSink sink;
  PrefixCache cache(pool, 2, nullptr, 0);
  const std::vector<int32_t> t = tokens(6);
  std::vector<uint64_t> hashes;
  cache.extend_block_hashes(t, 0, hashes);
  std::vector<int32_t> blocks;
  ASSERT_TRUE(pool.allocate_n(4, blocks));
  cache.insert({.hashes = std::span(hashes).subspan(1, 1), .block_ids = std::span(blocks).subspan(3, 1),
                .token_ids = std::span(t).subspan(2, 2), .parent_hash = hashes[0]});  // before the sink
  cache.set_event_sink(&sink);
  cache.insert({.hashes = hashes, .block_ids = std::span(blocks).first(3), .token_ids = t});
  ASSERT_EQ(sink.events.size(), 2u);  // block 1's hash was cached already: [0] and [2] are separate runs
  EXPECT_EQ(stored(sink.events[0]).block_hashes, (std::vector<uint64_t>{hashes[0]}));
  EXPECT_EQ(stored(sink.events[0]).token_ids, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(stored(sink.events[1]).block_hashes, (std::vector<uint64_t>{hashes[2]}));
  EXPECT_EQ(stored(sink.events[1]).parent_block_hash, hashes[1]);
  EXPECT_EQ(stored(sink.events[1]).token_ids, (std::vector<int32_t>{4, 5}));
}

}  // namespace
}  // namespace strata
