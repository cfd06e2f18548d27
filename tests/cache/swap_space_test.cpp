// SwapSpace with exact row ids: host rows sized in the device pools' proportions and capped at
// them, a swap out that does not fit taking nothing, contents coming back into other rows,
// and the counters /metrics reads.
#include "strata/cache/swap_space.h"

#include <gtest/gtest.h>

#include <vector>

namespace strata {
namespace {

// A host "device" pool of `rows` rows of `width` floats, row r filled with value base + r.
Tensor pool(int64_t rows, int64_t width, float base) {
  Tensor t = Tensor::host(DType::kF32, {rows, width});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < width; ++i) t.data_as<float>()[r * width + i] = base + static_cast<float>(r);
  return t;
}

TEST(SwapSpace, RowsFollowTheDevicePoolsProportionsAndNeverExceedThem) {
  const Tensor kv = pool(10, 4, 0), ssm = pool(4, 8, 0);  // blocks of 16 bytes, slots of 32
  const SwapSpace all({.kv_pools = {kv}, .ssm_pools = {ssm}, .num_device_blocks = 10, .num_device_slots = 4,
                       .bytes = int64_t{1} << 30});
  EXPECT_EQ(all.num_host_blocks(), 10);
  EXPECT_EQ(all.num_host_slots(), 4);
  EXPECT_EQ(all.bytes(), 10 * 16 + 4 * 32);
  const SwapSpace half({.kv_pools = {kv}, .ssm_pools = {ssm}, .num_device_blocks = 10, .num_device_slots = 4,
                        .bytes = (10 * 16 + 4 * 32) / 2});
  EXPECT_EQ(half.num_host_blocks(), 5);
  EXPECT_EQ(half.num_host_slots(), 2);
}

TEST(SwapSpace, ContentsComeBackIntoOtherRowsAndAFullSpaceTakesNothing) {
  Tensor kv = pool(6, 4, 100), ssm = pool(3, 2, 200);
  SwapSpace swap({.kv_pools = {kv}, .ssm_pools = {ssm}, .num_device_blocks = 6, .num_device_slots = 3,
                  .bytes = (6 * 16 + 3 * 8) / 2});  // half the device pools: 3 blocks, 1 slot
  std::optional<SwappedMemory> a = swap.swap_out(std::vector<int32_t>{4, 1, 5}, 2, 2);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->host_blocks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(a->host_slot, 0);
  EXPECT_FALSE(swap.swap_out(std::vector<int32_t>{0}, 1, 0).has_value());  // no host slot left
  EXPECT_EQ(swap.counters().bytes_held, 2 * 16 + 8);
  const std::vector<int32_t> table = {0, 3};
  swap.swap_in(*a, table, 1);
  EXPECT_EQ(kv.data_as<float>()[0 * 4], 104.0f);  // block 4's contents now in block 0
  EXPECT_EQ(kv.data_as<float>()[3 * 4 + 3], 101.0f);
  EXPECT_EQ(ssm.data_as<float>()[1 * 2], 202.0f);
  EXPECT_EQ(swap.counters().num_swapped_out, 1);
  EXPECT_EQ(swap.counters().num_swapped_in, 1);
  EXPECT_EQ(swap.counters().bytes_swapped_in, 2 * 16 + 8);
  EXPECT_EQ(swap.counters().bytes_held, 0);
  EXPECT_TRUE(swap.swap_out(std::vector<int32_t>{0, 1, 2}, 3, -1).has_value());  // every row free again
}

}  // namespace
}  // namespace strata
