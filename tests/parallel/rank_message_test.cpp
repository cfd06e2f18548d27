// The memory operations and adapter loads rank 0 repeats on the other ranks survive their bytes.
#include <gtest/gtest.h>

#include "strata/model/multimodal_prompt.h"
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
      decode_rank_message(encode_rank_message({.kind = RankMessage::Kind::kSwapSpace, .swap_space_bytes = 1 << 30,
                                               .num_host_blocks = 321, .num_host_slots = 9}));
  EXPECT_EQ(space.swap_space_bytes, 1 << 30);
  EXPECT_EQ(space.num_host_blocks, 321);
  EXPECT_EQ(space.num_host_slots, 9);
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

TEST(RankMessage, SnapshotTierMessagesKeepTheirRowsAndSlots) {
  const RankMessage rows =
      decode_rank_message(encode_rank_message({.kind = RankMessage::Kind::kSnapshotRows, .snapshot_rows = 37}));
  EXPECT_EQ(rows.kind, RankMessage::Kind::kSnapshotRows);
  EXPECT_EQ(rows.snapshot_rows, 37);
  for (RankMessage::Kind kind : {RankMessage::Kind::kSnapshotOut, RankMessage::Kind::kSnapshotIn}) {
    const RankMessage back =
        decode_rank_message(encode_rank_message({.kind = kind, .device_slot = 5, .host_slot = 12}));
    EXPECT_EQ(back.kind, kind);
    EXPECT_EQ(back.device_slot, 5);
    EXPECT_EQ(back.host_slot, 12);
  }
}

TEST(RankMessage, LoraLoadsCarryTheSlotNameAndFolder) {
  const RankMessage back = decode_rank_message(encode_rank_message(
      {.kind = RankMessage::Kind::kLoadLora, .lora_slot = 3, .lora_name = "sql-lora", .lora_path = "/models/äd apter"}));
  EXPECT_EQ(back.kind, RankMessage::Kind::kLoadLora);
  EXPECT_EQ(back.lora_slot, 3);
  EXPECT_EQ(back.lora_name, "sql-lora");
  EXPECT_EQ(back.lora_path, "/models/äd apter");
  const RankMessage empty =
      decode_rank_message(encode_rank_message({.kind = RankMessage::Kind::kLoadLora, .lora_slot = 0}));
  EXPECT_EQ(empty.lora_slot, 0);
  EXPECT_EQ(empty.lora_name, "");
  EXPECT_EQ(empty.lora_path, "");
}

// An image prompt's row: every image's grid travels, and the embeddings of the images this step's
// tokens reach (here the second, whose image tokens 12..15 overlap tokens 10..13), bit for bit.
TEST(RankMessage, ImageRowsCarryGridsAndTheEmbeddingsTheStepReads) {
  auto image = [](int32_t first, int32_t h, int32_t w, float seed) {
    PromptImage out{.first_token = first, .grid_t = 1, .grid_h = h, .grid_w = w,
                    .embeds = Tensor::host(DType::kF32, {h * w, 3})};
    for (int64_t i = 0; i < out.embeds.numel(); ++i) out.embeds.data_as<float>()[i] = seed + 0.37f * i;
    return out;
  };
  const auto prompt = std::make_shared<const MultimodalPrompt>(
      std::vector<PromptImage>{image(1, 2, 3, -1.5f), image(12, 2, 2, 4.25f)});
  const StepRow row{.seq_id = 2, .token_ids = {5, 6, 7, 8}, .num_computed_tokens = 10, .multimodal = prompt};
  const RankMessage back = decode_rank_message(
      encode_rank_message({.kind = RankMessage::Kind::kStep, .rows = {row}, .block_size = 16}));
  ASSERT_EQ(back.rows.size(), 1u);
  ASSERT_NE(back.rows[0].multimodal, nullptr);
  const std::vector<PromptImage>& images = back.rows[0].multimodal->images();
  ASSERT_EQ(images.size(), 2u);
  EXPECT_EQ(images[0].first_token, 1);
  EXPECT_EQ(images[0].grid_h, 2);
  EXPECT_EQ(images[0].grid_w, 3);
  EXPECT_FALSE(images[0].embeds.defined());  // tokens 1..6 are not in this step
  EXPECT_EQ(images[1].first_token, 12);
  ASSERT_TRUE(images[1].embeds.defined());
  ASSERT_EQ(images[1].embeds.shape(), (Shape{4, 3}));
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(images[1].embeds.data_as<float>()[i], prompt->images()[1].embeds.data_as<float>()[i]) << i;
  for (int32_t index = 10; index < 14; ++index)
    EXPECT_EQ(back.rows[0].multimodal->rope_position(index), prompt->rope_position(index)) << index;
}

}  // namespace
}  // namespace strata
