#include "strata/engine/rank_worker.h"

#include <fmt/format.h>

#include <optional>

#include "strata/core/error.h"
#include "strata/lora/lora_set.h"
#include "strata/parallel/control_inbox.h"
#include "strata/parallel/step_message.h"

namespace strata {
namespace {

// A pipeline stage whose layers keep no recurrent state has no pool: rank 0's slots name nothing here.
void repeat_slot_change(ModelRunner& runner, const RankMessage& message) {
  if (runner.ssm_pool() == nullptr) return;
  switch (message.kind) {
    case RankMessage::Kind::kTakeSsmSlot: runner.ssm_pool()->take(message.ssm_slot); break;
    case RankMessage::Kind::kFreeSsmSlot: runner.memory().free_slot(message.ssm_slot); break;  // and its verify rows
    case RankMessage::Kind::kCopySsmSlot: runner.ssm_pool()->copy_slot(message.ssm_src_slot, message.ssm_slot); break;
    case RankMessage::Kind::kRollBackSsmSlot:
      runner.memory().roll_back(message.ssm_slot, message.num_verified, message.num_accepted);
      break;
    case RankMessage::Kind::kSnapshotRows: runner.memory().start_snapshot_rows(message.snapshot_rows); break;
    case RankMessage::Kind::kSnapshotOut:
    case RankMessage::Kind::kSnapshotIn:
      runner.memory().repeat_snapshot_copy({.out = message.kind == RankMessage::Kind::kSnapshotOut,
                                            .slot = message.device_slot, .row = message.host_slot});
      break;
    default: STRATA_CHECK_MSG(false, "not a slot message");
  }
}

// Every rank says whether it loaded the adapter, so rank 0 fails the group instead of running
// steps on different weights; a rank that could not load it then stops with its error.
void repeat_lora_load(LoraSet* lora, const RankMessage& message, Communicator& control) {
  std::string error;
  try {
    if (lora == nullptr)
      fail("this rank was started without LoRA slots; start it with the capacity of rank 0 (--max-loras, "
           "--max-lora-rank)");
    if (message.lora_slot < 0 || message.lora_slot >= lora->num_slots())
      fail("this rank has {} LoRA slots; start it with rank 0's max_loras (--max-loras)", lora->num_slots());
    lora->load(message.lora_slot, load_lora_adapter(message.lora_name, message.lora_path));
  } catch (const Error& e) {
    error = fmt::format("rank {} could not load LoRA adapter '{}' from {} into slot {}: {}", control.rank(),
                        message.lora_name, message.lora_path, message.lora_slot, e.what());
  }
  first_error_over_ranks(control, error);
  if (!error.empty()) fail("{}", error);
}

// Stage 0's other tensor-parallel ranks start and finish micro-batches as rank 0 does, so that
// each hands its rows on and takes its logits back at the same points of rank 0's order.
void repeat_step(ModelRunner& runner, RankMessage& message) {
  StepBatch step(std::move(message.rows), message.block_size, message.min_blocks_per_row);
  if (message.micro_batch && runner.is_first_stage()) return runner.start_micro_batch(step);
  runner.execute_on_device(step);  // its logits are rank 0's to read
}

}  // namespace

void serve_first_rank(ModelRunner& runner, Communicator& control, LoraSet* lora) {
  // Over stages a rank takes rank 0's messages as they come, whatever step it runs meanwhile.
  std::optional<ControlInbox> inbox;
  if (runner.splits_layers()) inbox.emplace(control);
  for (;;) {
    RankMessage message = inbox ? inbox->pop() : receive_from_first_rank(control);
    switch (message.kind) {
      case RankMessage::Kind::kStop: return;
      case RankMessage::Kind::kCopyKvBlock: runner.copy_kv_block(message.src_block, message.dst_block); break;
      case RankMessage::Kind::kSwapSpace:
        if (message.swap_space_bytes > 0)
          runner.memory().repeat_swap_space(message.swap_space_bytes, message.num_host_blocks, message.num_host_slots);
        else runner.memory().stop_swap_space();
        break;
      case RankMessage::Kind::kSwapOut:
      case RankMessage::Kind::kSwapIn:
        runner.memory().repeat_swap({.out = message.kind == RankMessage::Kind::kSwapOut,
                                     .device_blocks = message.device_blocks, .host_blocks = message.host_blocks,
                                     .device_slot = message.device_slot, .host_slot = message.host_slot});
        break;
      case RankMessage::Kind::kTakeSsmSlot:
      case RankMessage::Kind::kFreeSsmSlot:
      case RankMessage::Kind::kCopySsmSlot:
      case RankMessage::Kind::kRollBackSsmSlot:
      case RankMessage::Kind::kSnapshotRows:
      case RankMessage::Kind::kSnapshotOut:
      case RankMessage::Kind::kSnapshotIn: repeat_slot_change(runner, message); break;
      case RankMessage::Kind::kLoadLora:
        repeat_lora_load(lora, message, control);
        if (inbox) inbox->resume();
        break;
      case RankMessage::Kind::kStep: repeat_step(runner, message); break;
      case RankMessage::Kind::kFinishMicroBatch:
        if (runner.is_first_stage()) runner.finish_micro_batch();
        break;
    }
  }
}

}  // namespace strata
