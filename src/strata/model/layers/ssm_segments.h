// How a recurrent mixer walks the rows of a step: each row's tokens run as one segment with
// the row's SSM slot state, split where the row asks for snapshots (the state after exactly
// after_tokens tokens is copied to the snapshot's slot in between), and with per-token
// states written to the slot's verify buffer when the row keeps intermediates. A plain decode
// step (StepBatch::is_plain_ssm_decode, f32 pool) is one segment over every row instead, with
// the layer's slot-major state arrays and the device slot ids: one launch per op, no host work.
#pragma once

#include <functional>

#include "strata/model/forward_context.h"
#include "strata/model/step_batch.h"

namespace strata {

struct SsmSegment {
  int64_t begin = 0, end = 0;    // stacked token rows [begin, end)
  Tensor h_state;                // [h_state_elems] f32: the slot's state of this layer
  Tensor conv_state;             // [conv_state_elems] f32
  Tensor h_intermediates;        // [end - begin, h_state_elems] f32, or undefined
  Tensor conv_intermediates;     // [end - begin, conv_state_elems] f32, or undefined
  // Batched decode: token t is its own row with state slot state_slots[t]; h_state is then
  // [num_slots, h_state_elems] and conv_state [num_slots, conv_state_elems], every slot.
  Tensor state_slots;            // [end - begin] i32 on the device, or undefined

  // The states viewed as `per_slot` each, with a leading num_slots dim when batched.
  Tensor h_state_as(const Shape& per_slot) const;
  Tensor conv_state_as(const Shape& per_slot) const;
};

// Calls run(segment) for every segment of every row, in row order, with the state of pool layer
// `pool_layer` (a mixer's ctx.ssm_layer, a carry's ctx.carry_layer).
void for_each_ssm_segment(const StepBatch& step, ForwardContext& ctx, int64_t pool_layer,
                          const std::function<void(const SsmSegment&)>& run);
// The mixer's own state: pool layer ctx.ssm_layer.
inline void for_each_ssm_segment(const StepBatch& step, ForwardContext& ctx,
                                 const std::function<void(const SsmSegment&)>& run) {
  for_each_ssm_segment(step, ctx, ctx.ssm_layer, run);
}

}  // namespace strata
