// LoraSlotCache on the CPU with the qwen3 fixture's adapters: which slot each adapter id gets,
// least recently used replaced first and never one the batch needs, and the batch refused
// whole when it names more adapters than slots.
#include <gtest/gtest.h>

#include "model/fixture_support.h"
#include "strata/core/error.h"
#include "strata/lora/lora_slot_cache.h"
#include "test_support.h"

namespace strata::test {
namespace {

LoraRequest adapter(int64_t id) {
  const char* name = id % 2 == 1 ? "all_r8" : "attn_r4";  // the ids stand for distinct adapters
  return {.name = name, .id = id, .path = fixture_path(std::string("lora/qwen3/adapter_") + name)};
}

class LoraSlotCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { f_ = load_fixture("qwen3"); }
  Fixture f_;
};

TEST_F(LoraSlotCacheTest, LeastRecentlyUsedSlotIsReplaced) {
  LoraSet set({.max_loras = 2, .max_lora_rank = 8}, f_.loaded.config, *f_.backend);
  LoraSlotCache cache(set);
  EXPECT_EQ(cache.slots_for({adapter(1), std::nullopt, adapter(2), adapter(1)}), (std::vector<int32_t>{0, -1, 1, 0}));
  EXPECT_EQ(cache.slots_for({adapter(2)}), (std::vector<int32_t>{1}));
  EXPECT_EQ(cache.slots_for({adapter(3)}), (std::vector<int32_t>{0}));  // 1 was used longest ago
  EXPECT_EQ(cache.slots_for({adapter(3), adapter(4)}), (std::vector<int32_t>{0, 1}));  // 3 is kept for its batch
  EXPECT_EQ(cache.slots_for({adapter(4), adapter(3)}), (std::vector<int32_t>{1, 0}));
}

TEST_F(LoraSlotCacheTest, RefusesMoreAdaptersThanSlotsAndBadIds) {
  LoraSet set({.max_loras = 1, .max_lora_rank = 8}, f_.loaded.config, *f_.backend);
  LoraSlotCache cache(set);
  EXPECT_THROW(cache.slots_for({adapter(1), adapter(2)}), Error);
  EXPECT_THROW(cache.slots_for({adapter(0)}), Error);
  EXPECT_THROW(cache.slots_for({LoraRequest{.name = "missing", .id = 5, .path = temp_dir()}}), Error);
  EXPECT_EQ(cache.slots_for({adapter(2), adapter(2)}), (std::vector<int32_t>{0, 0}));
}

}  // namespace
}  // namespace strata::test
