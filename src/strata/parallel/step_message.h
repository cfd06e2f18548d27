// What rank 0 of a tensor-parallel group sends the other ranks before each step: the step's
// rows (their tokens, block tables and SSM slots, decided by rank 0's scheduler), or a copy of
// a KV block, or a LoRA adapter to load into a slot, or the end of the run. Every rank then does the same on its own part of the model
// and its own part of the cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/model/step_batch.h"
#include "strata/parallel/communicator.h"

namespace strata {

struct RankMessage {
  enum class Kind : uint8_t {
    kStep = 1, kCopyKvBlock = 2, kStop = 3, kSwapSpace = 4, kSwapOut = 5, kSwapIn = 6,
    kTakeSsmSlot = 7, kFreeSsmSlot = 8, kCopySsmSlot = 9, kRollBackSsmSlot = 10,
    kSnapshotRows = 11, kSnapshotOut = 12, kSnapshotIn = 13, kLoadLora = 14, kFinishMicroBatch = 15,
  };
  Kind kind = Kind::kStop;
  std::vector<StepRow> rows;        // kStep
  int64_t block_size = 0;           // kStep
  int64_t min_blocks_per_row = 1;   // kStep: the block-table stride rank 0 used
  // kStep: a micro-batch that stage 0's ranks start (ModelRunner::start_micro_batch) rather than
  // run through; kFinishMicroBatch: they take the oldest one's logits, as rank 0 does.
  bool micro_batch = false;
  int32_t src_block = -1, dst_block = -1;  // kCopyKvBlock
  int64_t swap_space_bytes = 0;     // kSwapSpace: start with this many bytes; 0: stop
  int32_t num_host_blocks = 0, num_host_slots = 0;  // kSwapSpace: rank 0's host rows
  std::vector<int32_t> device_blocks, host_blocks;  // kSwapOut, kSwapIn: pairwise
  int32_t device_slot = -1, host_slot = -1;          // kSwapOut, kSwapIn: -1 without SSM state;
                                                     // kSnapshotOut, kSnapshotIn: the slot and the row
  int32_t snapshot_rows = 0;                         // kSnapshotRows: the SSM host tier's rows
  int32_t ssm_slot = -1, ssm_src_slot = -1;  // kTakeSsmSlot, kFreeSsmSlot: ssm_slot; kCopySsmSlot: src to slot
  int32_t num_verified = 0, num_accepted = 0;  // kRollBackSsmSlot (of ssm_slot)
  int32_t lora_slot = -1;                 // kLoadLora: the LoraSet slot rank 0 loaded it into
  std::string lora_name, lora_path;       // kLoadLora: the adapter and its PEFT folder
};

// Throws an Error for rows a rank cannot rebuild from bytes (token types, pending samples). A row's
// images travel as their grids, with embeddings only for the images this step's tokens reach.
std::vector<uint8_t> encode_rank_message(const RankMessage& message);
// Asserts the bytes are a whole message (they come from encode_rank_message on rank 0).
RankMessage decode_rank_message(const std::vector<uint8_t>& bytes);

// Rank 0: the message to every other rank of the group.
void send_to_ranks(Communicator& group, const RankMessage& message);
// Ranks 1..n-1: the next message rank 0 sends (throws an Error when rank 0 is gone).
RankMessage receive_from_first_rank(Communicator& group);

// Every rank: the smallest of the ranks' values (each rank's broadcast in turn).
int64_t min_over_ranks(Communicator& group, int64_t value);
// Every rank: the first non-empty error of the ranks' (each rank's broadcast in turn); "" when
// every rank passed "". How ranks agree that a change they each made (a LoRA load) took.
std::string first_error_over_ranks(Communicator& group, const std::string& error);
// Every rank: rank 0's value.
int64_t first_rank_value(Communicator& group, int64_t value);

}  // namespace strata
