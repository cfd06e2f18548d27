// What collapses a model's residual streams ([T, n * hidden]) into the one row the final norm and
// the head read: DeepSeek-V4's hyper head, Qwen4-Exp's hyper-connection mixer.
#pragma once

#include "strata/model/forward_context.h"

namespace strata {

class StreamHead {
 public:
  virtual ~StreamHead() = default;
  // streams: [T, n * hidden] f32; out: [T, hidden] f32.
  virtual void collapse(const Tensor& streams, const Tensor& out, ForwardContext& ctx) const = 0;
};

}  // namespace strata
