// Host-side bookkeeping for layers whose tokens pool into fixed windows of `rate` positions
// (DeepSeek-V4's compressors, Qwen4-Exp's QSA index blocks): which windows close in a step, where
// their tokens' cache rows are, and the step's attention metadata.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/model/forward_context.h"
#include "strata/model/step_batch.h"
#include "strata/ops/paged_attention.h"

namespace strata {

// The windows that close in this step: their source tokens' slots ([E, S], the previous window
// first with overlap, -1 where absent), the slot of each window's last token and its first position.
struct ClosingWindows {
  std::vector<int32_t> sources, entry_slots, positions;
  int64_t count() const { return static_cast<int64_t>(entry_slots.size()); }
};

ClosingWindows closing_windows(const StepBatch& step, int64_t rate, bool overlap);

// values as a host i32 tensor of `shape`.
Tensor host_i32(const std::vector<int32_t>& values, Shape shape);
// values as an i32 tensor of `shape` on ctx's device (copied into ctx.workspace on a GPU).
Tensor step_i32(const std::vector<int32_t>& values, Shape shape, ForwardContext& ctx);

ops::AttentionMetadata attention_metadata(const StepBatch& step);

}  // namespace strata
