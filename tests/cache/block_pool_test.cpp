// BlockPool: exact ids in allocation order, all-or-nothing multi-allocation, exhaustion as
// a return value, reference counts and the free queue's order.
#include <gtest/gtest.h>

#include "strata/cache/block_pool.h"

namespace strata {
namespace {

TEST(BlockPool, AllocatesInOrderAndReportsExhaustion) {
  BlockPool pool(3);
  EXPECT_EQ(pool.allocate(), 0);
  EXPECT_EQ(pool.allocate(), 1);
  EXPECT_EQ(pool.allocate(), 2);
  EXPECT_EQ(pool.allocate(), std::nullopt);  // no blocks: a value, not a crash
  EXPECT_EQ(pool.num_free(), 0);
}

TEST(BlockPool, AllocateNIsAllOrNothing) {
  BlockPool pool(4);
  std::vector<int32_t> out;
  EXPECT_TRUE(pool.allocate_n(3, out));
  EXPECT_EQ(out, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_FALSE(pool.allocate_n(2, out));
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(pool.num_free(), 1);
}

TEST(BlockPool, FreedBlocksAreReusedOldestFreedFirst) {
  BlockPool pool(4);
  std::vector<int32_t> out;
  ASSERT_TRUE(pool.allocate_n(4, out));
  pool.release(2);
  pool.release(0);
  EXPECT_EQ(pool.free_queue(), (std::vector<int32_t>{2, 0}));
  EXPECT_EQ(pool.allocate(), 2);
  EXPECT_EQ(pool.allocate(), 0);
}

TEST(BlockPool, SharedBlocksFreeWithTheirLastReference) {
  BlockPool pool(2);
  const int32_t b = *pool.allocate();
  pool.add_ref(b);
  EXPECT_EQ(pool.ref_count(b), 2);
  pool.release(b);
  EXPECT_FALSE(pool.is_free(b));
  pool.release(b);
  EXPECT_TRUE(pool.is_free(b));
  pool.add_ref(b);  // revived from the free queue (a prefix-cache hit)
  EXPECT_EQ(pool.free_queue(), (std::vector<int32_t>{1}));
}

TEST(BlockPoolDeathTest, ReleasingAFreeBlockIsABug) {
  BlockPool pool(1);
  EXPECT_DEATH(pool.release(0), "released while free");
}

}  // namespace
}  // namespace strata
