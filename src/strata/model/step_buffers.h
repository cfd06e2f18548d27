// StepBuffers: persistent device homes for a step's metadata (token ids, positions, slots,
// row offsets, kv lengths, block tables, logits rows, SSM state slots), owned by the runner. Every step is
// copied into the same addresses, which captured decode graphs read; the buffers only grow,
// and generation() changes when they do.
#pragma once

#include <array>
#include <vector>

#include "strata/backend/backend.h"

namespace strata {

class StepBuffers {
 public:
  enum Field : uint8_t { kTokenIds, kPositions, kSlotMapping, kCuSeqlens, kKvLens, kBlockTables,
                         kLogitsIndices, kSsmSlots, kNumFields };

  explicit StepBuffers(Backend& backend) : backend_(backend) {}

  // A device view [shape] of `host` (shape.numel() i32 values) in `field`'s buffer.
  Tensor put(Field field, const std::vector<int32_t>& host, Shape shape);
  int64_t generation() const { return generation_; }

 private:
  Backend& backend_;
  std::array<Tensor, kNumFields> buffers_;  // [capacity] i32 each
  std::array<int64_t, kNumFields> capacity_{};
  int64_t generation_ = 0;
};

}  // namespace strata
