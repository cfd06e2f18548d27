// StepBuffers: persistent device homes for a step's metadata (token ids, positions, slots,
// row offsets, kv lengths, logits rows, SSM state slots, pending tokens, LoRA slots, token
// types, block tables),
// owned by the runner. Every step is packed into pinned host memory and copied in one
// transfer to the same device addresses, which captured decode graphs read. Two pinned
// halves alternate, so packing step N+1 never touches memory a queued copy of step N reads.
#pragma once

#include <array>
#include <memory>
#include <span>

#include "strata/backend/backend.h"

namespace strata {

class StepBuffers {
 public:
  // Block tables last: the one copy spans the used part of every field, and only the last
  // field's unused tail is left out of it.
  enum Field : uint8_t { kTokenIds, kPositions, kSlotMapping, kCuSeqlens, kKvLens, kLogitsIndices,
                         kSsmSlots, kPendingTokens, kLoraSlots, kTokenTypeIds, kBlockTables, kNumFields };
  using Fields = std::array<std::span<const int32_t>, kNumFields>;

  explicit StepBuffers(Backend& backend) : backend_(backend) {}

  // Queues the copy of every field; returns each field's device view ([span size] i32).
  std::array<Tensor, kNumFields> upload(const Fields& fields);
  int64_t generation() const { return generation_; }

 private:
  // Grows the layout so each field fits; a changed layout bumps generation().
  void reserve(const Fields& fields);

  Backend& backend_;
  Tensor device_;                            // [total capacity] i32
  std::array<Tensor, 2> staging_;            // pinned host, the same layout as device_
  std::array<std::unique_ptr<StreamMark>, 2> copied_;  // after each half's last copy
  std::array<int64_t, kNumFields> capacity_{}, offset_{};
  int64_t total_ = 0;
  int next_half_ = 0;
  int64_t generation_ = 0;
};

}  // namespace strata
