// The memory operations rank 0 repeats on the other tensor-parallel ranks survive their bytes.
#include <gtest/gtest.h>

#include "strata/parallel/step_message.h"

namespace strata {
namespace {

TEST(RankMessage, SwapsCarryTheirSlots) {
  const RankMessage back = decode_rank_message(encode_rank_message({.kind = RankMessage::Kind::kSwapOut,
                                                                    .device_blocks = {4, 9, 2},
                                                                    .host_blocks = {0, 1, 5},
                                                                    .device_slot = 3,
                                                                    .host_slot = 7}));
  EXPECT_EQ(back.kind, RankMessage::Kind::kSwapOut);
  EXPECT_EQ(back.device_blocks, (std::vector<int32_t>{4, 9, 2}));
  EXPECT_EQ(back.host_blocks, (std::vector<int32_t>{0, 1, 5}));
  EXPECT_EQ(back.device_slot, 3);
  EXPECT_EQ(back.host_slot, 7);
  const RankMessage space =
      decode_rank_message(encode_rank_message({.kind = RankMessage::Kind::kSwapSpace, .swap_space_bytes = 1 << 30}));
  EXPECT_EQ(space.swap_space_bytes, 1 << 30);
}

TEST(RankMessage, SsmSlotOperationsKeepTheirSlots) {
  for (RankMessage::Kind kind :
       {RankMessage::Kind::kTakeSsmSlot, RankMessage::Kind::kFreeSsmSlot, RankMessage::Kind::kCopySsmSlot}) {
    const RankMessage back = decode_rank_message(encode_rank_message({.kind = kind, .ssm_slot = 6, .ssm_src_slot = 2}));
    EXPECT_EQ(back.kind, kind);
    EXPECT_EQ(back.ssm_slot, 6);
    EXPECT_EQ(back.ssm_src_slot, 2);
  }
  const RankMessage roll = decode_rank_message(encode_rank_message(
      {.kind = RankMessage::Kind::kRollBackSsmSlot, .ssm_slot = 4, .num_verified = 5, .num_accepted = 2}));
  EXPECT_EQ(roll.ssm_slot, 4);
  EXPECT_EQ(roll.num_verified, 5);
  EXPECT_EQ(roll.num_accepted, 2);
}

}  // namespace
}  // namespace strata
